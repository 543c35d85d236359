# pipe.fifo (made by the test) is a FIFO
