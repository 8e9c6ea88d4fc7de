"""Crash testing: SIGKILL and power-loss tests (`crashtest`), each engine's durability settings and promises
(`settings`, from the engine descriptors), the killed writer (`child`), the checker (`check`) and the FUSE file
system that forgets unsynced writes (`forgetfs`)."""
