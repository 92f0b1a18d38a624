-- expected: with -m 64M the table of strings ends in "not enough memory", caught by pcall: exit 0
local t = {}
local ok, err = pcall(function()
  for i = 1, 1e9 do t[i] = string.rep("x", 1 << 20) .. i end
end)
local n = #t
t = nil
collectgarbage()
print(ok, err, n < 64)
