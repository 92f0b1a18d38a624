-- expected: with -t 1 husk stops the tight loop and exits 124 ("timed out after 1 s")
while true do end
