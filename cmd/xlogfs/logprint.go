package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/xlogfs/xlogfs/journal"
	"github.com/xlogfs/xlogfs/logbuf"
)

func init() {
	register(command{name: "logprint", summary: "print the records (and ops, transactions) of a store's log", run: runLogprint})
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
	Status      string   `json:"status"`
	Error       string   `json:"error,omitempty"`
	Ops         []jsonOp `json:"ops,omitempty"`
}

type jsonTransaction struct {
	TID     string   `json:"tid"`
	Start   string   `json:"start_lsn"`
	Commit  string   `json:"commit_lsn,omitempty"`
	Ops     []string `json:"ops"`
	Unmount bool     `json:"unmount,omitempty"`
}

type jsonLog struct {
	Store        string            `json:"store"`
	TailLSN      string            `json:"tail_lsn"`
	HeadLSN      string            `json:"head_lsn"`
	Clean        bool              `json:"clean"`
	Status       string            `json:"status"` // ok, torn, corrupt
	Error        string            `json:"error,omitempty"`
	Records      []jsonRecord      `json:"records"`
	Transactions []jsonTransaction `json:"transactions,omitempty"`
}

func runLogprint(args []string) error {
	fs := newFlags("logprint", "DIR", `
Prints the store's log from the checkpoint's tail to its head, one line per
record: LSN (cycle,block), length, op count, stored and computed CRC, the
durable watermark (the log was durable up to that LSN when the record was
written), status.
--ops adds a line per op header (decoding whole regions), --transactions
prints the transactions the records hold, put back together. The command
exits with status 1 at a bad record (a torn write or corruption), after
saying what is wrong and where. A mounted store is in use (exit 1); one whose
unmount is finishing is waited for, up to --wait.`)
	ops := fs.Bool("ops", false, "print each op header of each record")
	txs := fs.Bool("transactions", false, "print the transactions, reassembled across records")
	asJSON := fs.Bool("json", false, "print JSON: an object with a records list")
	wait := fs.Duration("wait", defaultStoreWait, "how long to wait for a store whose unmount is finishing")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	rep, err := inspectWaiting(pos[0], *wait, "logprint")
	if err != nil {
		return err
	}
	out := buildLog(pos[0], rep, *ops || *asJSON, *txs)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printLog(os.Stdout, out, *ops, *txs)
	}
	if out.Status != "ok" {
		if !*asJSON {
			fmt.Fprintf(os.Stderr, "xlogfs logprint: %s\n", out.Error)
		}
		return exitCode(1)
	}
	return nil
}

func recordJSON(r *journal.ScannedRecord, withOps bool) jsonRecord {
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
		j.Error = r.Err.Error()
	}
	if withOps && r.Record != nil {
		for _, op := range r.Record.Ops {
			jo := jsonOp{TID: fmt.Sprintf("%#x", op.TID), Len: len(op.Data), ClientID: clientName(op.ClientID), Flags: logbuf.FlagString(op.Flags)}
			if op.ClientID == logbuf.ClientTransaction && len(op.Data) > 0 && op.Flags&(logbuf.FlagContinue|logbuf.FlagWasCont) == 0 {
				if d, err := journal.DecodeOp(op.Data); err == nil {
					jo.Op = d.String()
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

func buildLog(dir string, rep *journal.LogReport, withOps, withTxs bool) jsonLog {
	out := jsonLog{Store: dir, TailLSN: rep.Checkpoint.TailLSN.String(), HeadLSN: rep.Head.String(), Clean: rep.Clean, Status: "ok", Records: []jsonRecord{}}
	for i := range rep.Records {
		out.Records = append(out.Records, recordJSON(&rep.Records[i], withOps))
	}
	if rep.Bad != nil {
		j := recordJSON(rep.Bad, false)
		switch {
		case rep.Corrupt != nil:
			j.Status, out.Status, out.Error = "corrupt", "corrupt", rep.Corrupt.Error()
		default:
			j.Status, out.Status = "torn", "torn"
			out.Error = fmt.Sprintf("bad record at LSN %v (log offset %d): %v — a torn write (it may have been in flight: %d record(s) from it on, at most %d in flight); mounting cuts the log here (%d later in-flight records and %d committed transactions dropped)",
				rep.Bad.LSN(), rep.Bad.Offset, rep.Bad.Err, rep.InFlight, rep.LogBufs, len(rep.Later), len(rep.AtStake))
		}
		j.OK = false
		out.Records = append(out.Records, j)
	}
	if rep.ReplayErr != nil && out.Status == "ok" {
		out.Status, out.Error = "corrupt", rep.ReplayErr.Error()
	}
	if withTxs {
		var ra logbuf.Reassembler
		for _, r := range rep.Records {
			done, err := ra.Add(r.LSN(), r.Record.Ops)
			for _, t := range done {
				jt := jsonTransaction{TID: fmt.Sprintf("%#x", t.TID), Start: t.Start.String(), Commit: t.Commit.String(), Unmount: t.Unmount}
				for _, reg := range t.Regions {
					if op, err := journal.DecodeOp(reg); err == nil {
						jt.Ops = append(jt.Ops, op.String())
					} else {
						jt.Ops = append(jt.Ops, "undecodable: "+err.Error())
					}
				}
				out.Transactions = append(out.Transactions, jt)
			}
			if err != nil {
				// Ops of transactions the checkpoint already holds can
				// open the walk; that is expected, not an error.
				ra = logbuf.Reassembler{}
			}
		}
	}
	return out
}

func printLog(w io.Writer, l jsonLog, ops, txs bool) {
	fmt.Fprintf(w, "log of %s: tail %s, head %s, %s\n", l.Store, l.TailLSN, l.HeadLSN, logState(l.Clean, len(l.Records)))
	fmt.Fprintf(w, "%-12s %8s %6s %-10s %-10s %-12s  %s\n", "LSN", "len", "ops", "crc", "computed", "durable", "status")
	for _, r := range l.Records {
		durable := r.DurableLSN
		if durable == "" {
			durable = "-"
		}
		fmt.Fprintf(w, "%-12s %8d %6d %-10s %-10s %-12s  %s\n", r.LSN, r.Len, r.NumOps, r.CRC, r.ComputedCRC, durable, r.Status)
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
		}
	}
	fmt.Fprintf(w, "%d records\n", len(l.Records))
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
