// Command goycsb runs PingCAP's go-ycsb client (github.com/pingcap/go-ycsb, its pkg/client and CoreWorkload) on its
// basic DB, a store that does nothing (db/basic, verbose off), for benchmarks/vs_ycsb.py --client go: go-ycsb's
// harness against kvlab's on the null engine.  Properties are `-p name=value`, as go-ycsb's own command takes them;
// it prints go-ycsb's measurement output and, last, one line: "THROUGHPUT <ops/s>" (operations over the client's
// run, from go-ycsb's measurements' total count).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/magiconair/properties"
	_ "github.com/pingcap/go-ycsb/db/basic"
	"github.com/pingcap/go-ycsb/pkg/client"
	"github.com/pingcap/go-ycsb/pkg/measurement"
	"github.com/pingcap/go-ycsb/pkg/prop"
	_ "github.com/pingcap/go-ycsb/pkg/workload"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

func main() {
	p := properties.NewProperties()
	p.Set("workload", "core")
	p.Set(prop.Command, "run")
	p.Set(prop.DoTransactions, "true")
	p.Set(prop.Verbose, "false")
	for i := 1; i+1 < len(os.Args); i += 2 {
		name, value, ok := strings.Cut(os.Args[i+1], "=")
		if os.Args[i] != "-p" || !ok {
			fmt.Fprintln(os.Stderr, "usage: goycsb [-p name=value]...")
			os.Exit(2)
		}
		p.Set(name, value)
	}
	measurement.InitMeasure(p)
	w, err := ycsb.GetWorkloadCreator("core").Create(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goycsb: workload:", err)
		os.Exit(1)
	}
	db, err := ycsb.GetDBCreator("basic").Create(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "goycsb: db:", err)
		os.Exit(1)
	}
	c := client.NewClient(p, w, client.DbWrapper{DB: db})
	start := time.Now()
	c.Run(context.Background())
	secs := time.Since(start).Seconds()
	measurement.Output()
	fmt.Printf("THROUGHPUT %.1f\n", float64(p.GetInt64(prop.OperationCount, 0))/secs)
}
