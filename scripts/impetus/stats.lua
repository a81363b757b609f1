-- stats: bounded records of a long series (per-step wall times): count, mean, min, max exactly, and the
-- median from a fixed reservoir of samples, so a run of ten million steps holds the same few kilobytes
-- as a run of ten. The reservoir is Vitter's algorithm R: after n samples each one is in it with
-- probability K / n, so its median estimates the series' median; below K samples it is exact.
local Stats = {}
Stats.__index = Stats

Stats.CAPACITY = 4096

function Stats.new(capacity)
  return setmetatable({ capacity = capacity or Stats.CAPACITY, samples = {}, n = 0, sum = 0, min = math.huge,
    max = -math.huge, seed = 12345 }, Stats)
end

-- a small linear congruential generator (Knuth's MMIX constants): the same reservoir on every run
local function next_random(self, n)
  self.seed = (self.seed * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
  return (self.seed >> 11) % n + 1
end

function Stats:add(x)
  self.n = self.n + 1
  self.sum = self.sum + x
  if x < self.min then self.min = x end
  if x > self.max then self.max = x end
  if self.n <= self.capacity then
    self.samples[self.n] = x
  else
    local j = next_random(self, self.n)
    if j <= self.capacity then self.samples[j] = x end
  end
end

function Stats:mean() return self.n > 0 and self.sum / self.n or 0 end

function Stats:median()
  local s = {}
  for i, v in ipairs(self.samples) do s[i] = v end
  table.sort(s)
  local n = #s
  if n == 0 then return 0 end
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

return Stats
