clause 0 (line 1): syscall::*:entry
  predicate:
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000013    ldgs    DT_VAR(19), %r1          ! pid
    01: 0f020000 00000000    setx    DT_INTEGER[0], %r2       ! 0x2a
    02: 12000102 00000000    cmp     %r1, %r2                 
    03: 16000000 00000006    be      06                       
    04: 11010000 00000000    mov     %r0, %r1                 
    05: 15000000 00000007    ba      07                       
    06: 0f010000 00000001    setx    DT_INTEGER[1], %r1       ! 0x1
    07: 13000100 00000000    tst     %r1                      
    08: 16000000 00000014    be      20                       
    09: 2c020000 00000000    ldgs    DT_VAR(0), %r2           ! arg0
    10: 0f030000 00000002    setx    DT_INTEGER[2], %r3       ! 0x0
    11: 12000203 00000000    cmp     %r2, %r3                 
    12: 17000000 0000000f    bne     15                       
    13: 11020000 00000000    mov     %r0, %r2                 
    14: 15000000 00000010    ba      16                       
    15: 0f020000 00000001    setx    DT_INTEGER[1], %r2       ! 0x1
    16: 13000200 00000000    tst     %r2                      
    17: 16000000 00000014    be      20                       
    18: 0f010000 00000001    setx    DT_INTEGER[1], %r1       ! 0x1
    19: 15000000 00000015    ba      21                       
    20: 0f010000 00000002    setx    DT_INTEGER[2], %r1       ! 0x0
    21: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #1: difexpr
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000010    ldgs    DT_VAR(16), %r1          ! timestamp
    01: 2f000100 00000000    stts    %r1, DT_VAR(0)           ! self->ts
    02: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
clause 1 (line 7): syscall::*:return
  predicate:
    OFF OPCODE            INSTRUCTION
    00: 2e010000 00000000    ldts    DT_VAR(0), %r1           ! self->ts
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #1: aggregate @lat quantize() keys=1
   key 0:
    OFF OPCODE            INSTRUCTION
    00: 10010000 00000000    sets    DT_STRING[0], %r1        ! "ns"
    01: 20010000 00000000    ret     %r1                      
    (string table 3 bytes)
    returns D type (string) by ref
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000010    ldgs    DT_VAR(16), %r1          ! timestamp
    01: 2e020000 00000000    ldts    DT_VAR(0), %r2           ! self->ts
    02: 09010102 00000000    sub     %r1, %r2, %r1            
    03: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #2: difexpr
    OFF OPCODE            INSTRUCTION
    00: 0f010000 00000000    setx    DT_INTEGER[0], %r1       ! 0x0
    01: 2f000100 00000000    stts    %r1, DT_VAR(0)           ! self->ts
    02: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
