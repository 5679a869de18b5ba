package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/xlogfs/xlogfs/journal/meta"
	"github.com/xlogfs/xlogfs/journal/recovery"
	"github.com/xlogfs/xlogfs/journal/xfsitems"
	"github.com/xlogfs/xlogfs/journal/xlog"
	"github.com/xlogfs/xlogfs/logbuf"
)

func init() {
	register(command{name: "logprint", summary: "print the records (and ops, transactions) of a store's log", args: "DIR", min: 1, max: 1, setup: runLogprint})
}

type jsonOp struct {
	TID      string `json:"tid"`
	Len      int    `json:"len"`
	ClientID string `json:"clientid"`
	Flags    string `json:"flags"`
	Op       string `json:"op,omitempty"` // decoded, for whole regions
}

type jsonRecord struct {
	LSN         string   `json:"lsn"`
	Cycle       uint32   `json:"cycle"`
	Block       uint32   `json:"block"`
	Offset      int64    `json:"offset"`
	Len         int      `json:"len"`
	Size        int      `json:"size,omitempty"`
	TailLSN     string   `json:"tail_lsn,omitempty"`
	DurableLSN  string   `json:"durable_lsn,omitempty"` // the durable watermark
	Restamped   int      `json:"restamped,omitempty"`   // blocks whose cycle word was restored to verify
	NumOps      int      `json:"num_ops"`
	CRC         string   `json:"crc"`
	ComputedCRC string   `json:"computed_crc"`
	OK          bool     `json:"ok"`
	Live        bool     `json:"live"`  // between the tail and the head: what a mount replays
	Where       string   `json:"where"` // live, old (behind the tail, --all), or later (past a torn record, --all)
	Status      string   `json:"status"`
	Error       string   `json:"error,omitempty"`
	Ops         []jsonOp `json:"ops,omitempty"`
}

type jsonTransaction struct {
	TID     string   `json:"tid"`
	Start   string   `json:"start_lsn"`
	Commit  string   `json:"commit_lsn,omitempty"`
	Ops     []string `json:"ops"`
	Items   []string `json:"items,omitempty"` // the XFS log items after the op (--log-items xfs)
	Unmount bool     `json:"unmount,omitempty"`
}

type jsonLog struct {
	Store        string            `json:"store"`
	CRCCoverage  string            `json:"crc_coverage"` // what the records' CRCs cover: the store's (mkfs --crc)
	TailLSN      string            `json:"tail_lsn"`
	HeadLSN      string            `json:"head_lsn"`
	Clean        bool              `json:"clean"`
	Status       string            `json:"status"` // ok, torn, corrupt
	Error        string            `json:"error,omitempty"`
	All          bool              `json:"all,omitempty"` // the records behind the tail are in Records too
	Records      []jsonRecord      `json:"records"`
	Transactions []jsonTransaction `json:"transactions,omitempty"`
	Stats        *jsonLogStats     `json:"stats,omitempty"`
}

// jsonLogStats is --stats: what the records kept hold, by kind of bytes,
// and by op type (as pg_waldump --stats counts by resource manager).
type jsonLogStats struct {
	Records      int          `json:"records"`
	OldRecords   int          `json:"old_records"`
	Bytes        int64        `json:"bytes"`           // on disk
	HeaderBytes  int64        `json:"header_bytes"`    // record and extension header blocks
	OpHeaders    int64        `json:"op_header_bytes"` // 12 bytes per op
	RegionBytes  int64        `json:"region_bytes"`
	PaddingBytes int64        `json:"padding_bytes"` // to the record's last block
	Transactions int          `json:"transactions"`
	Ops          []jsonOpStat `json:"ops"`
	Items        []jsonOpStat `json:"items,omitempty"` // XFS log items by type: count, and bytes of their regions
}

type jsonOpStat struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"` // the ops' regions, encoded
}

const logprintAbout = `
Prints the store's log, one line per record: LSN (cycle,block), length,
op count, stored and computed CRC, the durable watermark (the log was
durable up to that LSN when the record was written), status. By default
from the checkpoint's tail to the head: what a mount would replay. The
CRCs are computed under the store's CRC coverage (mkfs --crc: whole or
xfs), which the first line names.

--all walks every record still in the log file, as xfs_logprint does:
also those behind the tail, which checkpoints have made history but no
record has overwritten yet (after a clean unmount, the workload's), each
marked live or old; the walk follows the pass each position belongs to and
stops only where the cycle stops matching.

--from LSN and --to LSN keep the records from and to those LSNs (cycle,block,
both included); --ino N keeps the records and transactions with an op on
inode N (as the inode, or as the directory of a name), --type OP those with
an op of that type (create, write, ..., or unmount). --ops adds a line per
op header (decoding whole regions), --transactions prints the transactions
the records hold, put back together. --stats prints, as pg_waldump --stats
does, the records' header and payload bytes and a count and the bytes of
each op type, of the records and transactions kept. --json prints any of
it as JSON.

The command exits with status 1 at a bad live record (a torn write or
corruption), after saying what is wrong and where. A mounted store is in
use (exit 1); one whose unmount is finishing is waited for, up to --wait.`

// logFilter is what --from, --to, --ino and --type keep.
type logFilter struct {
	from, to logbuf.LSN // inclusive; to 0: no end
	ino      meta.Ino
	hasIno   bool
	opType   string // "" for any
}

func (f logFilter) ops() bool { return f.hasIno || f.opType != "" }

func (f logFilter) inRange(lsn logbuf.LSN) bool {
	return lsn >= f.from && (f.to == 0 || lsn <= f.to)
}

// matches reports whether a decoded op is one --ino and --type keep.
func (f logFilter) matches(op meta.Op) bool {
	if f.opType != "" && op.Type.String() != f.opType {
		return false
	}
	if f.hasIno && op.Ino != f.ino && op.Parent != f.ino && op.NewParent != f.ino {
		return false
	}
	return true
}

func runLogprint(fs *flagSet) func(pos []string) error {
	fs.about = logprintAbout
	ops := fs.Bool("ops", false, "print each op header of each record")
	txs := fs.Bool("transactions", false, "print the transactions, reassembled across records")
	all := fs.Bool("all", false, "also the records behind the tail, still in the log file (marked old)")
	from := fs.String("from", "", "start at this LSN, cycle,block (e.g. 1,0)")
	to := fs.String("to", "", "end at this LSN, cycle,block (included)")
	ino := fs.Uint64("ino", 0, "keep records and transactions with an op on this inode")
	opType := stringEnum(fs, "type", "", opTypeNames(), "op type", "keep records and transactions with an op of this type")
	stats := fs.Bool("stats", false, "print a count and the bytes of each op type, and the records' header and payload bytes")
	asJSON := fs.Bool("json", false, "print JSON: an object with a records list")
	wait := fs.Duration("wait", defaultStoreWait, "how long to wait for a store whose unmount is finishing")
	return func(pos []string) (err error) {
		var filt logFilter
		if *from != "" {
			if filt.from, err = parseLSN(*from); err != nil {
				return fs.usagef("--from: %v", err)
			}
		}
		if *to != "" {
			if filt.to, err = parseLSN(*to); err != nil {
				return fs.usagef("--to: %v", err)
			}
			if filt.to < filt.from {
				return fs.usagef("--to %s is before --from %s", *to, *from)
			}
		}
		filt.hasIno = fs.Changed("ino")
		filt.ino = meta.Ino(*ino)
		filt.opType = opType.v
		rep, err := inspectWaiting(pos[0], *wait, "logprint", *all)
		if err != nil {
			return err
		}
		if err := checkRange(rep, filt); err != nil {
			return err
		}
		out := buildLog(pos[0], rep, logOptions{ops: *ops || *asJSON, txs: *txs, all: *all, stats: *stats, filter: filt})
		if *stats {
			// The summary alone, as pg_waldump --stats prints it.
			out.Records, out.Transactions = []jsonRecord{}, nil
		}
		if note := rangeNote(rep, filt, *all, out); note != "" {
			fmt.Fprintf(os.Stderr, "xlogfs logprint: %s\n", note)
		}
		if *asJSON {
			if err := printJSON(os.Stdout, out); err != nil {
				return err
			}
		} else {
			printLog(os.Stdout, out, *ops, *txs)
		}
		if out.Status != "ok" {
			if !*asJSON {
				msg := out.Error
				if rep.Corrupt != nil {
					msg = corruptText(rep.Corrupt, pos[0])
				}
				fmt.Fprintf(os.Stderr, "xlogfs logprint: %s\n", msg)
			}
			return exitCode(1)
		}
		return nil
	}
}

// opTypeNames are the op types --type takes: the journal's, and unmount.
func opTypeNames() []string {
	var names []string
	for t := meta.OpType(1); t < 255; t++ {
		if n := t.String(); !strings.HasPrefix(n, "op(") {
			names = append(names, n)
		}
	}
	return append(names, "unmount")
}

// parseLSN reads an LSN as logprint prints it: cycle,block.
func parseLSN(s string) (logbuf.LSN, error) {
	c, b, ok := strings.Cut(s, ",")
	cycle, err1 := strconv.ParseUint(strings.TrimSpace(c), 10, 32)
	block, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("%q is not an LSN: want cycle,block as logprint prints it, e.g. 1,0", s)
	}
	return logbuf.MakeLSN(uint32(cycle), uint32(block)), nil
}

func recordJSON(r *xlog.ScannedRecord, withOps bool, keep func(logbuf.Op) bool) jsonRecord {
	j := jsonRecord{LSN: r.LSN().String(), Cycle: r.LSN().Cycle(), Block: r.LSN().Block(), Offset: r.Offset,
		CRC: fmt.Sprintf("%#08x", r.Stored), ComputedCRC: fmt.Sprintf("%#08x", r.Computed), OK: r.Err == nil, Status: "ok"}
	if r.Header != nil {
		j.Len, j.Size, j.TailLSN, j.NumOps = int(r.Header.Len), int(r.Header.Size), r.Header.TailLSN.String(), int(r.Header.NumLogOps)
		if r.Header.Durable != 0 {
			j.DurableLSN = r.Header.Durable.String()
		}
	}
	if r.Restamped > 0 {
		j.Restamped, j.Status = r.Restamped, "ok (cycle words restored)"
	}
	if r.Err != nil {
		j.Error, j.OK = r.Err.Error(), false
	}
	if withOps && r.Record != nil {
		// A transaction's regions after its op are XFS log items: an
		// item's format region says how many regions it takes, and the
		// rest are its body (an inode core, buffer chunks).
		type itemLeft struct {
			name       string
			left, size int
		}
		items := map[uint32]itemLeft{}
		for _, op := range r.Record.Ops {
			whole := op.ClientID == logbuf.ClientTransaction && len(op.Data) > 0 && op.Flags&(logbuf.FlagContinue|logbuf.FlagWasCont) == 0
			if !keep(op) {
				continue
			}
			jo := jsonOp{TID: fmt.Sprintf("%#x", op.TID), Len: len(op.Data), ClientID: clientName(op.ClientID), Flags: logbuf.FlagString(op.Flags)}
			if whole {
				it := items[op.TID]
				if it.left > 0 {
					jo.Op = fmt.Sprintf("%s: region %d of %d", it.name, it.size-it.left+1, it.size)
					it.left--
					items[op.TID] = it
				} else if d, err := meta.DecodeOp(op.Data); err == nil {
					jo.Op = d.String()
				} else if desc, n, ok := xfsitems.DescribeFormat(op.Data); ok {
					jo.Op = "item " + desc
					name, _, _ := strings.Cut(desc, " ")
					items[op.TID] = itemLeft{name: name + " item", left: n - 1, size: n}
				} else {
					jo.Op = "undecodable: " + err.Error()
				}
			}
			j.Ops = append(j.Ops, jo)
		}
	}
	return j
}

func clientName(c uint8) string {
	switch c {
	case logbuf.ClientTransaction:
		return "TRANS"
	case logbuf.ClientLog:
		return "LOG"
	}
	return fmt.Sprintf("%#x", c)
}

// logOptions say what logprint prints.
type logOptions struct {
	ops, txs, all, stats bool
	filter               logFilter
}

// logTxn is a transaction reassembled from the records, its ops decoded.
type logTxn struct {
	t     logbuf.Transaction
	ops   []meta.Op       // decoded regions
	bad   []string        // regions that do not decode
	raw   [][]byte        // the decoded regions' bytes, as ops
	items []xfsitems.Item // the XFS log items after the op
}

func buildLog(dir string, rep *recovery.LogReport, o logOptions) jsonLog {
	out := jsonLog{Store: dir, CRCCoverage: rep.Superblock.Coverage.String(), TailLSN: rep.Checkpoint.TailLSN.String(), HeadLSN: rep.Head.String(), Clean: rep.Clean, Status: "ok", All: o.all, Records: []jsonRecord{}}
	type entry struct {
		r     *xlog.ScannedRecord
		where string
	}
	var list []entry
	if o.all {
		for i := range rep.Old {
			list = append(list, entry{&rep.Old[i], "old"})
		}
	}
	for i := range rep.Records {
		list = append(list, entry{&rep.Records[i], "live"})
	}
	if rep.Bad != nil {
		list = append(list, entry{rep.Bad, "live"})
	}
	if o.all {
		for i := range rep.Later {
			list = append(list, entry{&rep.Later[i], "later"})
		}
	}

	// Transactions, put back together over the records in log order.
	var ra logbuf.Reassembler
	var txns []logTxn
	for _, e := range list {
		if e.r.Record == nil || e.where == "later" || e.r == rep.Bad {
			continue
		}
		done, err := ra.Add(e.r.LSN(), e.r.Record.Ops)
		for _, t := range done {
			lt := logTxn{t: t}
			if len(t.Regions) > 0 {
				if op, err := meta.DecodeOp(t.Regions[0]); err == nil {
					lt.ops, lt.raw = append(lt.ops, op), append(lt.raw, t.Regions[0])
				} else {
					lt.bad = append(lt.bad, "undecodable: "+err.Error())
				}
				items, err := xfsitems.Parse(t.Regions[1:])
				lt.items = items
				if err != nil {
					lt.bad = append(lt.bad, "bad log items: "+err.Error())
				}
			}
			txns = append(txns, lt)
		}
		if err != nil {
			// Ops of transactions that began before the first record
			// walked (behind the checkpoint, or overwritten) can open
			// the walk; that is expected, not an error.
			ra = logbuf.Reassembler{}
		}
	}
	f := o.filter
	matched := map[uint32]bool{}
	if f.ops() {
		for _, t := range txns {
			if t.t.Unmount && f.opType == "unmount" && !f.hasIno || slices.ContainsFunc(t.ops, f.matches) {
				matched[t.t.TID] = true
			}
		}
		for _, e := range list {
			if e.r.Record == nil {
				continue
			}
			for _, op := range e.r.Record.Ops {
				if d, ok := wholeOp(op); ok && f.matches(d) {
					matched[op.TID] = true
				}
			}
		}
	}
	keepOp := func(op logbuf.Op) bool { return !f.ops() || matched[op.TID] }

	var st *jsonLogStats
	if o.stats {
		st = &jsonLogStats{Ops: []jsonOpStat{}}
		out.Stats = st
	}
	for _, e := range list {
		r := e.r
		if !f.inRange(r.LSN()) || f.ops() && (r.Record == nil || !slices.ContainsFunc(r.Record.Ops, keepOp)) {
			continue
		}
		j := recordJSON(r, o.ops, keepOp)
		j.Where, j.Live = e.where, e.where == "live"
		switch {
		case r == rep.Bad && rep.Corrupt != nil:
			j.Status, j.OK = "corrupt", false
			out.Status, out.Error = "corrupt", rep.Corrupt.Error()
		case r == rep.Bad:
			j.Status, j.OK = "torn", false
			out.Status = "torn"
			out.Error = fmt.Sprintf("bad record at LSN %v (log offset %d): %v — a torn write (it may have been in flight: records from it on: %d, at most %d in flight); mounting cuts the log here (%d later in-flight records and %s dropped)",
				rep.Bad.LSN(), rep.Bad.Offset, rep.Bad.Err, rep.InFlight, rep.LogBufs, len(rep.Later), rep.Stake().Count())
		case r.Err != nil:
			j.Status = "bad"
		}
		out.Records = append(out.Records, j)
		if st != nil && r.Header != nil {
			st.Records++
			if e.where == "old" {
				st.OldRecords++
			}
			st.Bytes += int64(r.Header.RecordBytes())
			st.HeaderBytes += int64(r.Header.HeaderBytes())
			var used int64
			if r.Record != nil {
				for _, op := range r.Record.Ops {
					used += logbuf.OpHeaderSize + int64(len(op.Data))
					st.OpHeaders += logbuf.OpHeaderSize
					st.RegionBytes += int64(len(op.Data))
				}
				st.PaddingBytes += int64(r.Header.Len) - used
			}
		}
	}
	if rep.ReplayErr != nil && out.Status == "ok" {
		out.Status, out.Error = "corrupt", rep.ReplayErr.Error()
	}

	byType := map[string]*jsonOpStat{}
	countOp := func(typ string, n int) {
		s := byType[typ]
		if s == nil {
			s = &jsonOpStat{Type: typ}
			byType[typ] = s
		}
		s.Count++
		s.Bytes += int64(n)
	}
	for _, t := range txns {
		if !f.inRange(t.t.Commit) || f.ops() && !matched[t.t.TID] {
			continue
		}
		if o.txs {
			jt := jsonTransaction{TID: fmt.Sprintf("%#x", t.t.TID), Start: t.t.Start.String(), Commit: t.t.Commit.String(), Unmount: t.t.Unmount}
			for _, op := range t.ops {
				jt.Ops = append(jt.Ops, op.String())
			}
			for _, it := range t.items {
				jt.Items = append(jt.Items, it.String())
			}
			jt.Ops = append(jt.Ops, t.bad...)
			out.Transactions = append(out.Transactions, jt)
		}
		if st != nil {
			st.Transactions++
			if t.t.Unmount {
				countOp("unmount", 0)
			}
			for i, op := range t.ops {
				if !f.ops() || f.matches(op) {
					countOp(op.Type.String(), len(t.raw[i]))
				}
			}
		}
	}
	if st != nil {
		for _, name := range opTypeNames() {
			if s := byType[name]; s != nil {
				st.Ops = append(st.Ops, *s)
			}
		}
		st.Items = itemStats(txns, f)
	}
	return out
}

// wholeOp decodes an op header's region when it holds a whole op (not a
// piece of a split one).
func wholeOp(op logbuf.Op) (meta.Op, bool) {
	if op.ClientID != logbuf.ClientTransaction || len(op.Data) == 0 || op.Flags&(logbuf.FlagContinue|logbuf.FlagWasCont) != 0 {
		return meta.Op{}, false
	}
	d, err := meta.DecodeOp(op.Data)
	return d, err == nil
}

func printLog(w io.Writer, l jsonLog, ops, txs bool) {
	if s := l.Stats; s != nil {
		fmt.Fprintf(w, "log of %s: tail %s, head %s; crc %s\n", l.Store, l.TailLSN, l.HeadLSN, l.CRCCoverage)
		printLogStats(w, s)
		return
	}
	fmt.Fprintf(w, "log of %s: tail %s, head %s, %s; crc %s\n", l.Store, l.TailLSN, l.HeadLSN, logState(l.Clean, len(l.Records)), l.CRCCoverage)
	fmt.Fprintf(w, "%-12s %8s %6s %-10s %-10s %-12s %-5s  %s\n", "LSN", "len", "ops", "crc", "computed", "durable", "where", "status")
	live, old := 0, 0
	for _, r := range l.Records {
		durable := r.DurableLSN
		if durable == "" {
			durable = "-"
		}
		if r.Live {
			live++
		} else {
			old++
		}
		fmt.Fprintf(w, "%-12s %8d %6d %-10s %-10s %-12s %-5s  %s\n", r.LSN, r.Len, r.NumOps, r.CRC, r.ComputedCRC, durable, r.Where, r.Status)
		if r.Error != "" {
			fmt.Fprintf(w, "    error: %s\n", r.Error)
		}
		if ops {
			for i, op := range r.Ops {
				fmt.Fprintf(w, "    op %d: tid %s len %d client %s flags %s", i, op.TID, op.Len, op.ClientID, op.Flags)
				if op.Op != "" {
					fmt.Fprintf(w, ": %s", op.Op)
				}
				fmt.Fprintln(w)
			}
		}
	}
	if txs {
		fmt.Fprintf(w, "\n%d transactions:\n", len(l.Transactions))
		for _, t := range l.Transactions {
			if t.Unmount {
				fmt.Fprintf(w, "  tid %s at %s: unmount record\n", t.TID, t.Start)
				continue
			}
			fmt.Fprintf(w, "  tid %s %s..%s: %s\n", t.TID, t.Start, t.Commit, joinOps(t.Ops))
			for _, it := range t.Items {
				fmt.Fprintf(w, "      %s\n", it)
			}
		}
	}
	if s := l.Stats; s != nil {
		printLogStats(w, s)
	}
	if l.All {
		fmt.Fprintf(w, "%d records: %d live, %d old\n", len(l.Records), live, old)
	} else {
		fmt.Fprintf(w, "%d records\n", len(l.Records))
	}
}

// printLogStats prints --stats as pg_waldump --stats does: counts and
// bytes with their shares.
func printLogStats(w io.Writer, s *jsonLogStats) {
	pct := func(n, of int64) string {
		if of == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
	}
	fmt.Fprintf(w, "\n%d records (%d old), %d transactions, %d bytes on disk:\n", s.Records, s.OldRecords, s.Transactions, s.Bytes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, k := range []struct {
		name string
		n    int64
	}{{"header blocks", s.HeaderBytes}, {"op headers", s.OpHeaders}, {"regions", s.RegionBytes}, {"padding", s.PaddingBytes}} {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t\n", k.name, k.n, pct(k.n, s.Bytes))
	}
	if s.Records > 0 {
		fmt.Fprintf(tw, "  per record: header\t%d\t\t\n", s.HeaderBytes/int64(s.Records))
		fmt.Fprintf(tw, "  per record: payload\t%d\t\t\n", (s.OpHeaders+s.RegionBytes)/int64(s.Records))
	}
	tw.Flush()
	var count, bytes int64
	for _, o := range s.Ops {
		count += int64(o.Count)
		bytes += o.Bytes
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op type\tcount\t(%)\tbytes\t(%)\t")
	for _, o := range s.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t\n", o.Type, o.Count, pct(int64(o.Count), count), o.Bytes, pct(o.Bytes, bytes))
	}
	fmt.Fprintf(tw, "total\t%d\t\t%d\t\t\n", count, bytes)
	tw.Flush()
	if len(s.Items) > 0 {
		var n, b int64
		for _, it := range s.Items {
			n += int64(it.Count)
			b += it.Bytes
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "log item\tcount\t(%)\tbytes\t(%)\t")
		for _, it := range s.Items {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t\n", it.Type, it.Count, pct(int64(it.Count), n), it.Bytes, pct(it.Bytes, b))
		}
		fmt.Fprintf(tw, "total\t%d\t\t%d\t\t\n", n, b)
		tw.Flush()
	}
}

// itemStats counts the XFS log items of the transactions kept, by type
// (the word their description starts with), in order of bytes.
func itemStats(txns []logTxn, f logFilter) []jsonOpStat {
	by := map[string]*jsonOpStat{}
	for _, t := range txns {
		if !f.inRange(t.t.Commit) {
			continue
		}
		for _, it := range t.items {
			name, _, _ := strings.Cut(it.String(), " ")
			if it.Type == 0 {
				name = "trans-header"
			} else if name == "buf" {
				name += " " + strings.Fields(it.String())[1]
			}
			s := by[name]
			if s == nil {
				s = &jsonOpStat{Type: name}
				by[name] = s
			}
			s.Count++
			s.Bytes += int64(it.Bytes + it.Regions*logbuf.OpHeaderSize)
		}
	}
	var out []jsonOpStat
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b jsonOpStat) int {
		if a.Bytes != b.Bytes {
			return int(b.Bytes - a.Bytes)
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out
}

func joinOps(ops []string) string {
	if len(ops) == 1 {
		return ops[0]
	}
	s := ""
	for i, o := range ops {
		if i > 0 {
			s += "; "
		}
		s += o
	}
	return s
}

// logState says in words what a mount will make of a log.
func logState(clean bool, records int) string {
	switch {
	case clean:
		return "clean (ends with an unmount record)"
	case records == 0:
		return "empty"
	}
	return "dirty: a mount replays it"
}

// checkRange refuses a --from or --to whose block lies outside the log.
func checkRange(rep *recovery.LogReport, f logFilter) error {
	blocks := uint32(rep.Superblock.LogSize / 512)
	for _, b := range []struct {
		flag string
		lsn  logbuf.LSN
	}{{"--from", f.from}, {"--to", f.to}} {
		if b.lsn.Block() >= blocks {
			return fmt.Errorf("%s %s: block %d is past the end of the log, which has %d blocks (0 to %d)", b.flag, b.lsn, b.lsn.Block(), blocks, blocks-1)
		}
	}
	return nil
}

// rangeNote explains an empty --from/--to range: behind the tail (the
// records there are old: --all prints them) or past the head (not written
// yet).
func rangeNote(rep *recovery.LogReport, f logFilter, all bool, out jsonLog) string {
	if f.from == 0 && f.to == 0 || len(out.Records) > 0 || out.Stats != nil && out.Stats.Records > 0 {
		return ""
	}
	tail, head := rep.Checkpoint.TailLSN, rep.Head
	switch {
	case f.to != 0 && f.to < tail && !all:
		return fmt.Sprintf("no records from %s to %s: the range is behind the log's tail %s, where the live log starts; --all also prints the old records behind it", f.from, f.to, tail)
	case f.to != 0 && f.to < tail:
		return fmt.Sprintf("no records from %s to %s: the range is behind the log's tail %s and no old record is left there", f.from, f.to, tail)
	case f.from >= head:
		return fmt.Sprintf("no records from %s: the log's head is %s, where the next record goes", f.from, head)
	}
	return ""
}
