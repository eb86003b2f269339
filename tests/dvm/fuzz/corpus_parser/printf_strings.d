#pragma D option quiet
tb:::hot
{
	this->name = strjoin(probeprov, probename);
	printf("%s fired %d times in %s\n", this->name, arg0, execname);
}
