"""What the machine says: the process's and the device's counters (`accounting`), the system's state and checks
(`system`), the engine libraries' build facts (`buildfacts`), memory cgroups (`cgroup`)."""
