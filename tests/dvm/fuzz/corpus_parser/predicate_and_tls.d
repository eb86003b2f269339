syscall::*:entry
/pid == 42 && arg0 != 0/
{
	self->ts = timestamp;
}

syscall::*:return
/self->ts/
{
	@lat["ns"] = quantize(timestamp - self->ts);
	self->ts = 0;
}
