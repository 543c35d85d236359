# the victim's own work: nothing else
