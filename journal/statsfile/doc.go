// Package statsfile is the .stats format: the journal's counters (Stats),
// their writer (Stats.WriteTo) and their one parser (Parse, with the File
// it returns), next to each other, with the log-linear histograms both use
// (HistBounds) and CksumTimes, which the log reports the checksum's time
// per record and per log force to. Package journal gathers the Stats of a
// mount; xlogfs stats, umount, the bench and the tests read them back with
// Parse.
//
// The format, which Stats.WriteTo writes (the mount's hidden .stats file,
// expvar and the bench all show it) and Parse reads:
// text, one item per line, each line a name, one space, and a value.
//
//	log_records 1234
//	cksum_mode batched
//	crc_coverage whole
//	state degraded: checkpoint failed: ...
//	fsync_us_hist 1024 1152 17
//
// Names are lower case with underscores and end in their unit where they
// have one (_ns, _us, _bytes). A value is a number or text running to the
// end of the line. A histogram is the lines of one name ending in _hist,
// one per non-empty bucket, in increasing order: the bucket's bounds in
// the name's unit, [lo, hi), and its count. Readers skip names they do not
// know, so lines can be added.
package statsfile
