module github.com/xlogfs/xlogfs

go 1.26
