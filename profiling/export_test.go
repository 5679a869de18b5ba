package profiling

// RescaleProfile is rescaleProfile, for the external tests.
var RescaleProfile = rescaleProfile
