# weights.bin (made by the test) is 3 GiB of holes
