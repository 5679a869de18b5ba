//go:build !lockorder

package lockorder

import "sync"

// Enabled reports whether this build checks the lock order.
const Enabled = false

// Mutex is a sync.Mutex of rank R.
type Mutex[R Rank] struct{ sync.Mutex }

// RWMutex is a sync.RWMutex of rank R.
type RWMutex[R Rank] struct{ sync.RWMutex }
