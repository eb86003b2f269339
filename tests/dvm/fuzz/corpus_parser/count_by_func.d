/* Count firings per function: the adapter's "count" action with a key. */
syscall::getpid:entry
{
	@calls[probefunc] = count();
}
