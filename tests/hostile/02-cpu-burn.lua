-- expected: with --cpu-time 1 husk stops the burn and exits 152 ("CPU time limit of 1 s")
local x = 0
while true do x = (x * 1103515245 + 12345) % 2147483648 end
