-- random: impetus.random, the seeded generator scenes use for dice and spawn points, so that a rewound or
-- replayed run draws the same numbers: its state is part of every snapshot the viewer's history keeps
-- and of a recorded run (math.random's state cannot be read, so it cannot travel in time).
--
--   impetus.random()            a float in [0, 1)
--   impetus.random(n)           an integer in 1 .. n
--   impetus.random(m, n)        an integer in m .. n
--   impetus.random.seed(x)      start the sequence from the integer x (the runner seeds it at every start
--                               and restart with its seed: --seed N, or the time)
--   impetus.random.state()      the generator's state, a table of four integers
--   impetus.random.set_state(s) the generator as it was when s was read
--
-- The generator is xoshiro256** (Blackman and Vigna), Lua's own, seeded through splitmix64; one per
-- process, as math.random is.
local random = {}

local s0, s1, s2, s3 = 0, 0, 0, 0

local function rotl(x, k) return (x << k) | (x >> (64 - k)) end

-- the next 64 random bits
local function next_bits()
  local result = rotl(s1 * 5, 7) * 9
  local t = s1 << 17
  s2 = s2 ~ s0
  s3 = s3 ~ s1
  s1 = s1 ~ s2
  s0 = s0 ~ s3
  s2 = s2 ~ t
  s3 = rotl(s3, 45)
  return result
end

-- an integer in [lo, hi] (lo <= hi), uniform: the bits masked to the smallest power of two that covers
-- the range, drawn again when they fall outside it
local function integer(lo, hi)
  local range = hi - lo -- as an unsigned 64-bit number
  local mask = range
  mask = mask | (mask >> 1)
  mask = mask | (mask >> 2)
  mask = mask | (mask >> 4)
  mask = mask | (mask >> 8)
  mask = mask | (mask >> 16)
  mask = mask | (mask >> 32)
  local r = next_bits() & mask
  while math.ult(range, r) do r = next_bits() & mask end
  return lo + r
end

local function whole(x, fn, what)
  local v = math.tointeger(x)
  if not v then error(string.format("impetus.random%s: argument '%s' must be an integer (got %s)", fn, what,
    type(x) == "number" and tostring(x) or type(x)), 3) end
  return v
end

setmetatable(random, {
  __call = function(_, m, n)
    if m == nil then return (next_bits() >> 11) * 0x1p-53 end
    if n == nil then m, n = 1, whole(m, "", "n") else m, n = whole(m, "", "m"), whole(n, "", "n") end
    if m > n then error(string.format("impetus.random: the interval is empty (%d > %d)", m, n), 2) end
    return integer(m, n)
  end,
})

function random.seed(x)
  local v = math.tointeger(x) or (type(x) == "number" and x == x and math.abs(x) < 2 ^ 63 and math.floor(x))
  if not v then error("impetus.random.seed: argument must be an integer", 2) end
  -- splitmix64: four well-mixed words from one, never all zero
  local z = v
  local function mix()
    z = z + 0x9e3779b97f4a7c15
    local r = z
    r = (r ~ (r >> 30)) * 0xbf58476d1ce4e5b9
    r = (r ~ (r >> 27)) * 0x94d049bb133111eb
    return r ~ (r >> 31)
  end
  s0, s1, s2, s3 = mix(), mix(), mix(), mix()
end

function random.state() return { s0, s1, s2, s3 } end

function random.set_state(s)
  if type(s) ~= "table" or #s ~= 4 then error("impetus.random.set_state: argument must be a state from impetus.random.state()", 2) end
  for k = 1, 4 do
    if math.type(s[k]) ~= "integer" then error("impetus.random.set_state: argument must be a state from impetus.random.state()", 2) end
  end
  if s[1] == 0 and s[2] == 0 and s[3] == 0 and s[4] == 0 then
    error("impetus.random.set_state: the all-zero state is not a state of the generator", 2)
  end
  s0, s1, s2, s3 = s[1], s[2], s[3], s[4]
end

random.seed(0)

return random
