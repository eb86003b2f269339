clause 0 (line 1): BEGIN
  action #1: trace
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000012    ldgs    DT_VAR(18), %r1          ! walltimestamp
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
clause 1 (line 2): tb:::payload
  predicate:
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000001    ldgs    DT_VAR(1), %r1           ! arg1
    01: 0f020000 00000000    setx    DT_INTEGER[0], %r2       ! 0x40
    02: 12000102 00000000    cmp     %r1, %r2                 
    03: 1a000000 00000006    bge     06                       
    04: 11010000 00000000    mov     %r0, %r1                 
    05: 15000000 00000007    ba      07                       
    06: 0f010000 00000001    setx    DT_INTEGER[1], %r1       ! 0x1
    07: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #1: tracemem size 64
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000000    ldgs    DT_VAR(0), %r1           ! arg0
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #2: stack size 32
clause 2 (line 3): fbt::tb_*:entry
  action #1: difexpr
    OFF OPCODE            INSTRUCTION
    00: 2c010000 0000001a    ldgs    DT_VAR(26), %r1          ! probefunc
    01: 38000000 00000000    flushts                          
    02: 37000100 00000000    pushtr  %r1, DT_STRING           
    03: 34010000 00000000    ldta    DT_VAR(0), %r1           ! self->calls
    04: 0f020000 00000000    setx    DT_INTEGER[0], %r2       ! 0x1
    05: 08030102 00000000    add     %r1, %r2, %r3            
    06: 2c020000 0000001a    ldgs    DT_VAR(26), %r2          ! probefunc
    07: 38000000 00000000    flushts                          
    08: 37000200 00000000    pushtr  %r2, DT_STRING           
    09: 35000300 00000000    stta    %r3, DT_VAR(0)           ! self->calls
    10: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #2: aggregate @avg avg() keys=1
   key 0:
    OFF OPCODE            INSTRUCTION
    00: 2c010000 0000001a    ldgs    DT_VAR(26), %r1          ! probefunc
    01: 20010000 00000000    ret     %r1                      
    returns D type (string) by ref
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000011    ldgs    DT_VAR(17), %r1          ! vtimestamp
    01: 2c020000 00000000    ldgs    DT_VAR(0), %r2           ! arg0
    02: 09010102 00000000    sub     %r1, %r2, %r1            
    03: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
clause 3 (line 4): profile:::profile-997
  action #1: aggregate @samples count() keys=1
   key 0:
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000015    ldgs    DT_VAR(21), %r1          ! cpu
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
clause 4 (line 5): END
  action #1: exit
    OFF OPCODE            INSTRUCTION
    00: 0f010000 00000000    setx    DT_INTEGER[0], %r1       ! 0x0
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
