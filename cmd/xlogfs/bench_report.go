package main

import (
	"fmt"
	"os"

	"github.com/xlogfs/xlogfs/cmd/xlogfs/internal/benchreport"
)

const benchReportAbout = `
Prints a saved bench run again from its results.json: the table, the
comparisons with the reference, the attribution and the verdict, all
computed afresh from the raw values of every round, and draws chart.svg and
chart.png into DIR again (unless --no-chart).

With two DIRs (or more) it compares each with the first, target by target:
medians in both, the ratio, and the Mann-Whitney U test's p-value over the
two runs' rounds (two runs are not paired, so no interval); then each run's
own comparisons with its reference side by side. Targets are matched by
name, else by mode and the implementation asked for, so two machines'
batched/best meet whatever their fastest kernels are called. For a
benchmark-format view, run benchstat on the runs' bench.txt files.`

// runBenchReport is "xlogfs bench report DIR [DIR2...]".
func runBenchReport(fs *flagSet) func([]string) error {
	fs.about = benchReportAbout
	asJSON := fs.Bool("json", false, "print the (re-analysed) results.json of the first DIR")
	noChart := fs.Bool("no-chart", false, "do not redraw the chart")
	wide := fs.Bool("wide", false, "print every column of every table (the report keeps to 120 columns otherwise)")
	return func(dirs []string) error {
		var runs []*benchreport.Results
		for _, d := range dirs {
			res, err := benchreport.Load(d)
			if err != nil {
				return err
			}
			benchreport.Analyze(res)
			runs = append(runs, res)
		}
		if *asJSON {
			return printJSON(os.Stdout, runs[0])
		}
		if len(runs) == 1 {
			benchreport.Print(os.Stdout, runs[0], *wide)
			if !*noChart {
				if st, err := os.Stat(dirs[0]); err == nil && st.IsDir() {
					if err := writeChart(runs[0], dirs[0]); err != nil {
						return fmt.Errorf("chart: %w", err)
					}
					fmt.Printf("\nchart.svg and chart.png drawn in %s\n", dirs[0])
				}
			}
			return nil
		}
		for i := 1; i < len(runs); i++ {
			if i > 1 {
				fmt.Println()
			}
			benchreport.Compare(os.Stdout, runs[0], runs[i], dirs[0], dirs[i])
		}
		return nil
	}
}
