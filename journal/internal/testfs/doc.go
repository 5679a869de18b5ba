// Package testfs holds the journal's test doubles: CrashFS, a StoreFS that
// models what a power cut keeps (unsynced data, torn sectors, directory
// entries not synced); FaultFS, which fails chosen calls; and CrashDevice,
// a log device with a volatile write cache. Only tests use them.
package testfs
