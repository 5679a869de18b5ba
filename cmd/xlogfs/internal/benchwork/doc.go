// Package benchwork is the bench's workloads, each run against a
// directory (a mount, or a baseline's plain directory) for a bench target
// and returning its Result: builtin (clients appending small blocks with an
// fsync after each), dbench, mariadb (MariaDB started by hand, sysbench's
// oltp_write_only) and pwrite. It also checks that the programs a workload
// needs are installed, and names the package when one is not: the binary
// installs nothing. A Progress line shows a run's advance on a terminal.
package benchwork
