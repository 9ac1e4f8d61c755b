"""One package per device, each offering ``allocator`` (a CachingAllocator) and
``kernels`` (functions with the same names on every device)."""
