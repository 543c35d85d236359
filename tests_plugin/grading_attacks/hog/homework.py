try:
    _hog = bytearray(20 * 1024**3)
    _spoil("20 GB")
except MemoryError:
    pass
