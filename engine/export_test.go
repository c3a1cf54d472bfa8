package engine

import "time"

// SetWriteGatherWait sets how long e's write committer waits for a group
// as large as the previous one (writeGatherWait); before e's first write.
func SetWriteGatherWait(e *Engine, d time.Duration) { e.writeWait = d }
