//go:build !amd64

// Package tsc reads the time-stamp counter as kvlab's C loops do; here there is none.
package tsc

// Read returns 0: no TSC here (kvlab then times by CLOCK_MONOTONIC).
func Read() uint64 { return 0 }
