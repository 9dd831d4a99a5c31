package cache

// ServeEpoch makes epoch the one that serves, as a reload's swap does.
func (c *Cache) ServeEpoch(epoch uint64) { c.serve(epoch) }
