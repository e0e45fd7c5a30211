"""The worker processes: started, forked, pooled, fed runs, and reaped."""
