clause 0 (line 2): tb:::hot
  action #1: difexpr
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000018    ldgs    DT_VAR(24), %r1          ! probeprov
    01: 2c020000 0000001b    ldgs    DT_VAR(27), %r2          ! probename
    02: 38000000 00000000    flushts                          
    03: 36000100 00000000    pushtv  %r1                      
    04: 36000200 00000000    pushtv  %r2                      
    05: 39010000 00000001    call    strjoin, %r1             
    06: 38000000 00000000    flushts                          
    07: 31000100 80000000    stls    %r1, DT_VAR(0)           ! this->name (by ref)
    08: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #2: printf format 0 arg 0
    OFF OPCODE            INSTRUCTION
    00: 30010000 80000000    ldls    DT_VAR(0), %r1           ! this->name (by ref)
    01: 20010000 00000000    ret     %r1                      
    returns D type (string) by ref
  action #3: printf format 0 arg 1
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000000    ldgs    DT_VAR(0), %r1           ! arg0
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #4: printf format 0 arg 2
    OFF OPCODE            INSTRUCTION
    00: 2c010000 0000001c    ldgs    DT_VAR(28), %r1          ! execname
    01: 20010000 00000000    ret     %r1                      
    returns D type (string) by ref
