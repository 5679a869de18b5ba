module github.com/xlogfs/xlogfs

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	golang.org/x/sys v0.50.0
)

require (
	github.com/hanwen/go-fuse/v2 v2.12.1
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
)

require github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
