"""Database directories: the lock taken before anything is touched, the marker and clearing only what kvlab made
(`dbdir`), a run that cannot fit refused first (`sizecheck`), what SIGKILLed runs left (`leftovers`)."""
