# zero.dev (made by the test) is a device
