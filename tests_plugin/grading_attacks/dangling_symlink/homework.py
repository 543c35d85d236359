# notes.txt (made by the test) points nowhere
