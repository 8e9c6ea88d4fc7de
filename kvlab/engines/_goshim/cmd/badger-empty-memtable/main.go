// Command badger-empty-memtable is docs/crashtest.md's finding 5 reduced: Badger 4.9.6 with SyncWrites off does not
// reopen after a power cut.  No FUSE and no kvlab: the cut's effect is made by hand.
//
// Badger makes a memtable's write-ahead log (00001.mem), extends it to twice the memtable size with ftruncate and
// writes it through a memory map; with SyncWrites off nothing fsyncs the file, so a power cut before anything else
// syncs it can leave the file's name durable and its size not: an empty 00001.mem (kvlab's forgetfs logged exactly
// that: "size 134217728 (durable 0)").  On the reopen, DB.openMemTables gets z.NewFile (ristretto's "Create a new
// file", which z.OpenMmapFile returns for a file of size 0) from openMemTable and takes it as an error, where
// newMemTable takes the same value as success; so the database never opens again.  Its documentation allows data
// loss on a crash with SyncWrites off, not a database that no longer opens.
//
// The command writes one key in a child process that ends without closing the database (a crash: the page cache
// keeps what it wrote), then reopens a copy of the folder as a crash leaves it, and another copy with 00001.mem
// emptied, as the cut leaves it.  One line each; exit 0 when the second reopen fails as described (the finding
// holds), 1 when both reopen (a fixed Badger), 2 on anything else.
//
//	go run ./cmd/badger-empty-memtable
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
)

const key, value = "k", "v"

// small files (the defaults preallocate 128 MiB and more), so that the folder copies at once; the finding is the
// same at the defaults (kvlab's crash test ran them)
func options(dir string) badger.Options {
	return badger.DefaultOptions(dir).WithLogger(nil).WithSyncWrites(false).WithMemTableSize(8 << 20).
		WithValueLogFileSize(1 << 20)
}

// write: the child: one key written with SyncWrites off, then the process ends without Close.
func write(dir string) {
	db, err := badger.Open(options(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), []byte(value)) }); err != nil {
		fmt.Fprintln(os.Stderr, "set:", err)
		os.Exit(2)
	}
	os.Exit(0) // no db.Close(): as a crash ends it
}

// reopen: whether the folder opens, and whether the key is there.
func reopen(dir string) (bool, error) {
	db, err := badger.Open(options(dir))
	if err != nil {
		return false, err
	}
	defer db.Close()
	found := false
	err = db.View(func(txn *badger.Txn) error {
		_, err := txn.Get([]byte(key))
		found = err == nil
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	return found, err
}

func copyDir(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-write" {
		write(os.Args[2])
	}
	top, err := os.MkdirTemp("", "badger-empty-memtable-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer os.RemoveAll(top)
	written := filepath.Join(top, "written")
	child := exec.Command(os.Args[0], "-write", written)
	child.Stderr = os.Stderr
	if err := child.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "the writer:", err)
		os.Exit(2)
	}
	crashed, cut := filepath.Join(top, "crash"), filepath.Join(top, "cut")
	for _, d := range []string{crashed, cut} {
		if err := copyDir(written, d); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := os.Truncate(filepath.Join(cut, "00001.mem"), 0); err != nil { // what the cut leaves of it
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	found, err := reopen(crashed)
	fmt.Printf("after a crash (00001.mem as written): opens %v, key found %v\n", err == nil, found)
	if err != nil {
		os.Exit(2)
	}
	found, err = reopen(cut)
	if err == nil {
		fmt.Printf("after a power cut (00001.mem empty): opens true, key found %v: fixed\n", found)
		os.Exit(1)
	}
	fmt.Printf("after a power cut (00001.mem empty): opens false: %v\n", err)
	if !strings.Contains(err.Error(), "Create a new file") {
		os.Exit(2)
	}
}
