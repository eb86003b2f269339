BEGIN { trace(walltimestamp); }
tb:::payload /arg1 >= 64/ { tracemem(arg0, 64); stack(4); }
fbt::tb_*:entry { self->calls[probefunc]++; @avg[probefunc] = avg(vtimestamp - arg0); }
profile:::profile-997 { @samples[cpu] = count(); }
END { exit(0); }
