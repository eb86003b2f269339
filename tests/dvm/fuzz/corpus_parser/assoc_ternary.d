tb:tracebench:hot:fire
{
	counts[arg0 % 4, "bucket"] += 1;
	x = counts[arg0 % 4, "bucket"] > 10 ? 1 : -1;
	@m = max(x);
	@l = lquantize(arg0, 0, 100, 10);
}
