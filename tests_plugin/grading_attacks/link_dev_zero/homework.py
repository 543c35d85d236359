# data.bin (made by the test) points at /dev/zero
