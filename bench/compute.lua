local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t = {}
for i = 1, 300000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
local parts = {}
for i = 1, 100000 do parts[#parts + 1] = tostring(i) end
local s = table.concat(parts, ",")
local x = 0.0
for i = 1, 3000000 do x = x + math.sin(i) * math.sqrt(i) end
print(fib(27), t[1000], #s, string.format("%.3f", x))
-- CPU-bound work for bench/compute: recursion, tables, strings, floats.
-- (No comment on the first line: lua -e refuses an argument starting with '-'.)
