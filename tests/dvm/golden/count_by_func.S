clause 0 (line 2): syscall::getpid:entry
  action #1: aggregate @calls count() keys=1
   key 0:
    OFF OPCODE            INSTRUCTION
    00: 2c010000 0000001a    ldgs    DT_VAR(26), %r1          ! probefunc
    01: 20010000 00000000    ret     %r1                      
    returns D type (string) by ref
