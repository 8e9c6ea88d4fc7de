// Package tsc reads the time-stamp counter as kvlab's C loops do (__rdtsc: RDTSC, unfenced), from Go without a cgo
// call.
package tsc

// Read returns the TSC.
//
//go:noescape
func Read() uint64
