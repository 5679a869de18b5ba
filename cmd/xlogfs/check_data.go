package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/xlogfs/xlogfs/journal/recovery"
)

// printDataFiles prints check's lines about the data files: each regular
// file whose data file lacks bytes that were durable, or that they hold
// what they must.
func printDataFiles(rep *recovery.LogReport) {
	switch {
	case rep.ReplayErr != nil:
		// The floors come from replay: nothing to say.
	case rep.DataErr != nil:
		fmt.Printf("data files: CANNOT READ: %v\n", rep.DataErr)
	case len(rep.MissingData) > 0:
		for _, d := range rep.MissingData {
			fmt.Printf("data files: %v\n", d)
		}
		lack := "lack"
		if len(rep.MissingData) == 1 {
			lack = "lacks"
		}
		fmt.Printf("data files: %s %s bytes the store had made durable; a mount refuses the store (mount --allow-missing-data mounts it, those files failing reads and writes with EIO)\n",
			plural(len(rep.MissingData), "regular file"), lack)
	default:
		fmt.Println("data files: ok (each holds at least what was durable)")
	}
}

// logMissingData says again, in the daemon's log once it is ready (the
// mount's stderr had it from recovery), which files a mount with
// --allow-missing-data serves with EIO: the log is where a reader's EIO
// is looked up later.
func logMissingData(logf func(string, ...any), missing []recovery.MissingData) {
	for _, d := range missing {
		logf("%v: served with EIO (--allow-missing-data) until truncated to 0 or removed", d)
	}
}

// checkJSON is check --json's report: what check prints, as one object.
type checkJSON struct {
	Sound      bool `json:"sound"`
	Superblock struct {
		Format   uint32 `json:"format"`
		UUID     string `json:"uuid"`
		LogBytes int64  `json:"log_bytes"`
		LogBSize int    `json:"logbsize"`
	} `json:"superblock"`
	Checkpoint struct {
		Seq     uint64 `json:"seq"`
		TailLSN string `json:"tail_lsn"`
		Inodes  int    `json:"inodes"`
		LastTID string `json:"last_tid"`
	} `json:"checkpoint"`
	Records           int               `json:"records"` // valid records from the tail
	Head              string            `json:"head"`
	Clean             bool              `json:"clean"` // the log ends with an unmount record
	Restamped         int               `json:"restamped_records"`
	Torn              *tornJSON         `json:"torn"` // a torn write, where a mount cuts the log
	Corrupt           *string           `json:"corrupt"`
	Replayed          int               `json:"replayed"`
	Dropped           int               `json:"dropped"` // transactions without a COMMIT
	ReplayError       *string           `json:"replay_error"`
	Problems          []string          `json:"problems"`
	InodesAfterReplay int               `json:"inodes_after_replay"`
	DataError         *string           `json:"data_error"`
	MissingDataCount  int               `json:"missing_data_count"`
	MissingData       []missingDataJSON `json:"missing_data"`
}

// tornJSON is the torn write where a mount cuts the log.
type tornJSON struct {
	LSN      string `json:"lsn"`
	Offset   int64  `json:"offset"`
	Error    string `json:"error"`
	InFlight int    `json:"in_flight"` // records from it on
	LogBufs  int    `json:"logbufs"`   // at most in flight
	Later    int    `json:"later_records"`
	AtStake  int    `json:"committed_transactions_dropped"`
}

// missingDataJSON is a regular file whose data file lacks bytes that were
// durable.
type missingDataJSON struct {
	Ino        uint64 `json:"ino"`
	Path       string `json:"path"`
	DataFile   string `json:"data_file"`
	WantBytes  int64  `json:"want_bytes"`
	FoundBytes int64  `json:"found_bytes"`
	Exists     bool   `json:"exists"`
}

func errString(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// printCheckJSON prints check --json's report, and fails as check does
// when the store is not sound.
func printCheckJSON(rep *recovery.LogReport) error {
	var j checkJSON
	sb, ck := rep.Superblock, rep.Checkpoint
	j.Sound = rep.Sound()
	j.Superblock.Format, j.Superblock.UUID, j.Superblock.LogBytes, j.Superblock.LogBSize = sb.Version, fmt.Sprintf("%x", sb.UUID), sb.LogSize, sb.LogBSize
	j.Checkpoint.Seq, j.Checkpoint.TailLSN, j.Checkpoint.Inodes, j.Checkpoint.LastTID = ck.Seq, ck.TailLSN.String(), len(ck.Model.Inodes), fmt.Sprintf("%#x", ck.LastTID)
	j.Records, j.Head, j.Clean = len(rep.Records), rep.Head.String(), rep.Clean
	for _, r := range rep.Records {
		if r.Restamped > 0 {
			j.Restamped++
		}
	}
	if rep.Torn && rep.Bad != nil {
		j.Torn = &tornJSON{rep.Bad.LSN().String(), rep.Bad.Offset, fmt.Sprint(rep.Bad.Err), rep.InFlight, rep.LogBufs, len(rep.Later), len(rep.AtStake)}
	}
	j.Corrupt = errString(rep.Corrupt)
	j.Replayed, j.Dropped, j.ReplayError = rep.Replayed, rep.Dropped, errString(rep.ReplayErr)
	j.Problems = append([]string{}, rep.Problems...)
	if rep.Model != nil {
		j.InodesAfterReplay = len(rep.Model.Inodes)
	}
	j.DataError = errString(rep.DataErr)
	j.MissingData = []missingDataJSON{}
	for _, d := range rep.MissingData {
		j.MissingData = append(j.MissingData, missingDataJSON{Ino: uint64(d.Ino), Path: d.Path, DataFile: d.DataFile, WantBytes: d.Want, FoundBytes: d.Found, Exists: d.Exists})
	}
	j.MissingDataCount = len(j.MissingData)
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	fmt.Printf("%s\n", b)
	if !j.Sound {
		fmt.Fprintln(os.Stderr, "xlogfs check: the store is not sound")
		return exitCode(1)
	}
	return nil
}
