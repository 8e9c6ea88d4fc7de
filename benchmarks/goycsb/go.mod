module kvlab/goycsb

go 1.24.0

require (
	github.com/magiconair/properties v1.8.0
	github.com/pingcap/go-ycsb v1.0.3
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2 // indirect
	github.com/mattn/go-runewidth v0.0.9 // indirect
	github.com/olekukonko/tablewriter v0.0.5 // indirect
	github.com/pingcap/errors v0.11.5-0.20211224045212-9687c2b0f87c // indirect
	go.uber.org/atomic v1.9.0 // indirect
)
