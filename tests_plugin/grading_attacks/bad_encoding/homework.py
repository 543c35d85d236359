# the test appends _BAD = "<the bytes 0xff 0xfe>"
