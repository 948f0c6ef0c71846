"""Running code in workers: settings, protocol, isolation, pool, zygote, the worker and what it intercepts."""
