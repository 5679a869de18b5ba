package algobench

import "gonum.org/v1/gonum/stat/distuv"

// Upper95 is the one-sided 95 % Clopper-Pearson upper bound on the miss
// probability p after missed misses in trials independent trials: the p at
// which seeing missed or fewer misses has probability 5 %. That p is the
// 0.95 quantile of Beta(missed+1, trials−missed). With no misses it is
// 1 − 0.05^(1/trials), about 3/trials.
func Upper95(missed, trials int64) float64 {
	if trials <= 0 || missed >= trials {
		return 1
	}
	return distuv.Beta{Alpha: float64(missed + 1), Beta: float64(trials - missed)}.Quantile(0.95)
}
