clause 0 (line 1): tb:tracebench:hot:fire
  action #1: difexpr
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000000    ldgs    DT_VAR(0), %r1           ! arg0
    01: 0f020000 00000000    setx    DT_INTEGER[0], %r2       ! 0x4
    02: 0d010102 00000000    srem    %r1, %r2, %r1            
    03: 10020000 00000000    sets    DT_STRING[0], %r2        ! "bucket"
    04: 38000000 00000000    flushts                          
    05: 36000100 00000000    pushtv  %r1                      
    06: 37000200 00000000    pushtr  %r2, DT_STRING           
    07: 32010000 00000000    ldga    DT_VAR(0), %r1           ! counts
    08: 0f020000 00000001    setx    DT_INTEGER[1], %r2       ! 0x1
    09: 08010102 00000000    add     %r1, %r2, %r1            
    10: 2c020000 00000000    ldgs    DT_VAR(0), %r2           ! arg0
    11: 0f030000 00000000    setx    DT_INTEGER[0], %r3       ! 0x4
    12: 0d020203 00000000    srem    %r2, %r3, %r2            
    13: 10030000 00000000    sets    DT_STRING[0], %r3        ! "bucket"
    14: 38000000 00000000    flushts                          
    15: 36000200 00000000    pushtv  %r2                      
    16: 37000300 00000000    pushtr  %r3, DT_STRING           
    17: 33000100 00000000    stga    %r1, DT_VAR(0)           ! counts
    18: 20010000 00000000    ret     %r1                      
    (string table 7 bytes)
    returns D type (integer) (size 8)
  action #2: difexpr
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000000    ldgs    DT_VAR(0), %r1           ! arg0
    01: 0f020000 00000000    setx    DT_INTEGER[0], %r2       ! 0x4
    02: 0d010102 00000000    srem    %r1, %r2, %r1            
    03: 10020000 00000000    sets    DT_STRING[0], %r2        ! "bucket"
    04: 38000000 00000000    flushts                          
    05: 36000100 00000000    pushtv  %r1                      
    06: 37000200 00000000    pushtr  %r2, DT_STRING           
    07: 32010000 00000000    ldga    DT_VAR(0), %r1           ! counts
    08: 0f020000 00000001    setx    DT_INTEGER[1], %r2       ! 0xa
    09: 12000102 00000000    cmp     %r1, %r2                 
    10: 18000000 0000000d    bg      13                       
    11: 11010000 00000000    mov     %r0, %r1                 
    12: 15000000 0000000e    ba      14                       
    13: 0f010000 00000002    setx    DT_INTEGER[2], %r1       ! 0x1
    14: 13000100 00000000    tst     %r1                      
    15: 16000000 00000013    be      19                       
    16: 0f020000 00000002    setx    DT_INTEGER[2], %r2       ! 0x1
    17: 11010200 00000000    mov     %r2, %r1                 
    18: 15000000 00000016    ba      22                       
    19: 0f020000 00000002    setx    DT_INTEGER[2], %r2       ! 0x1
    20: 09020002 00000000    sub     %r0, %r2, %r2            
    21: 11010200 00000000    mov     %r2, %r1                 
    22: 2d000100 00000100    stgs    %r1, DT_VAR(256)         ! x
    23: 20010000 00000000    ret     %r1                      
    (string table 7 bytes)
    returns D type (integer) (size 8)
  action #3: aggregate @m max()
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000100    ldgs    DT_VAR(256), %r1         ! x
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
  action #4: aggregate @l lquantize()
    OFF OPCODE            INSTRUCTION
    00: 2c010000 00000000    ldgs    DT_VAR(0), %r1           ! arg0
    01: 20010000 00000000    ret     %r1                      
    returns D type (integer) (size 8)
