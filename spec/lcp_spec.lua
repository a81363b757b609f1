-- The pivoting LCP solver (engine/lcp.c; Dantzig, Baraff 1994): w = A f + b, f >= 0, w >= 0, f.w = 0.
local impetus = require "impetus"
local lcp = impetus.lcp

-- deterministic pseudo-random numbers (a 32-bit LCG), so a failure reproduces
local seed = 12345
local function rand()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
end

-- A = J J^T with J n x k: positive semidefinite, singular when k < n (redundant contacts)
local function psd(n, k)
  local J = {}
  for i = 1, n do
    J[i] = {}
    for c = 1, k do J[i][c] = 2 * rand() - 1 end
  end
  local A = {}
  for i = 1, n do
    A[i] = {}
    for j = 1, n do
      local s = 0
      for c = 1, k do s = s + J[i][c] * J[j][c] end
      A[i][j] = s
    end
  end
  return A
end

local function rand_b(n, scale)
  local b = {}
  for i = 1, n do b[i] = scale * (2 * rand() - 1) end
  return b
end

-- the largest violation of the LCP conditions, relative to the data's scale
local function violation(A, b, f, w, neq)
  neq = neq or 0
  local n, worst = #b, 0
  for i = 1, n do
    local s = b[i]
    for j = 1, n do s = s + A[i][j] * f[j] end
    assert(f[i] == f[i] and w[i] == w[i], "NaN in the solution")
    worst = math.max(worst, math.abs(s - w[i]))
    if i <= neq then
      worst = math.max(worst, math.abs(w[i]))
    else
      worst = math.max(worst, -f[i], -w[i], math.abs(f[i] * w[i]))
    end
  end
  return worst
end

describe("impetus.lcp.solve", function()
  it("solves a 1x1 problem: f = -b/a when b < 0, else f = 0", function()
    local f, w = lcp.solve({ { 2 } }, { -3 })
    assert.are.equal(1.5, f[1]); assert.are.equal(0, w[1])
    f, w = lcp.solve({ { 2 } }, { 3 })
    assert.are.equal(0, f[1]); assert.are.equal(3, w[1])
  end)

  it("meets complementarity to 1e-9 on 200 random positive definite problems (n = 1..30)", function()
    for trial = 1, 200 do
      local n = 1 + trial % 30
      local A, b = psd(n, n + 2), rand_b(n, 1)
      local f, w, info = lcp.solve(A, b)
      assert.are.equal("ok", info.status)
      local v = violation(A, b, f, w)
      assert(v < 1e-9, ("trial %d (n = %d): violation %.3g"):format(trial, n, v))
    end
  end)

  it("meets complementarity to 1e-9 on random singular PSD problems (rank < n: redundant rows)", function()
    for trial = 1, 200 do
      local n = 2 + trial % 25
      local k = 1 + trial % n -- rank k < n
      local A = psd(n, k)
      -- b = -A x0 + (nonnegative slack) keeps the problem feasible: x0 >= 0 is a witness
      local b, x0 = {}, {}
      for j = 1, n do x0[j] = rand() end
      for i = 1, n do
        local s = 0
        for j = 1, n do s = s - A[i][j] * x0[j] end
        b[i] = s + (rand() < 0.5 and rand() or 0)
      end
      local f, w, info = lcp.solve(A, b)
      local v = violation(A, b, f, w)
      assert(info.status == "ok" and v < 1e-9, ("trial %d (n = %d, rank %d): %s, violation %.3g, %d pivots"):format(trial, n, k, info.status, v, info.pivots))
    end
  end)

  it("takes a guessed clamped set without a pivot when it is the solution, and pivots when it is not", function()
    for trial = 1, 100 do
      local n = 2 + trial % 20
      local A, b = psd(n, n + 2), rand_b(n, 1)
      if trial % 3 == 0 then -- singular (redundant rows), kept feasible by a witness x0 >= 0
        A = psd(n, math.max(1, n - 2))
        local x0 = {}
        for j = 1, n do x0[j] = rand() end
        for i = 1, n do
          local s = 0
          for j = 1, n do s = s - A[i][j] * x0[j] end
          b[i] = s + (rand() < 0.5 and rand() or 0)
        end
      end
      local f, w, info = lcp.solve(A, b)
      assert.are.equal("ok", info.status)
      -- the cold solve's clamped rows as the guess: the same w (unique for PSD A), no pivot
      local f2, w2, info2 = lcp.solve(A, b, 0, f)
      assert.are.equal("ok", info2.status)
      assert.are.equal(0, info2.pivots)
      assert(violation(A, b, f2, w2) < 1e-9, ("trial %d: guessed solution violates by %.3g"):format(trial, violation(A, b, f2, w2)))
      for i = 1, n do assert(math.abs(w2[i] - w[i]) < 1e-9, ("trial %d: w[%d] %.17g vs %.17g"):format(trial, i, w2[i], w[i])) end
      -- every row guessed clamped: a solution only if no force pulls, else the pivoting solve
      local all = {}
      for i = 1, n do all[i] = 1 end
      local f3, w3, info3 = lcp.solve(A, b, 0, all)
      assert.are.equal("ok", info3.status)
      assert(violation(A, b, f3, w3) < 1e-9, ("trial %d: violation %.3g"):format(trial, violation(A, b, f3, w3)))
    end
    -- a one-row problem whose guess is wrong: f = 0 guessed for w = -3 < 0 is no solution
    local f, w, info = lcp.solve({ { 2 } }, { -3 }, 0, { 0 })
    assert.are.equal(1.5, f[1]); assert.are.equal(0, w[1]); assert(info.pivots > 0)
    -- guessed clamped where the row must stay free (b > 0): f would be -1.5 < 0, so it pivots
    f, w, info = lcp.solve({ { 2 } }, { 3 }, 0, { 1 })
    assert.are.equal(0, f[1]); assert.are.equal(3, w[1])
    assert.has_error(function() lcp.solve({ { 1 } }, { 1 }, 0, { 1, 2 }) end,
      "impetus.lcp.solve: argument 'guess' must have as many entries as 'b' (2 vs 1)")
    assert.has_error(function() lcp.solve({ { 1 } }, { 1 }, 0, { 0 / 0 }) end,
      "impetus.lcp.solve: argument 'guess' entry 1 must be a finite number")
  end)

  it("handles exactly duplicated rows (four coplanar contacts: a box on the floor)", function()
    -- a 2D box on the floor: two contacts at x = -1 and x = 1, each listed twice (duplicates)
    local m, I = 1, 1 / 3
    local xs = { -1, 1, -1, 1 }
    local A = {}
    for i = 1, 4 do
      A[i] = {}
      for j = 1, 4 do A[i][j] = 1 / m + xs[i] * xs[j] / I end
    end
    local b = { -9.81, -9.81, -9.81, -9.81 }
    local f, w, info = lcp.solve(A, b)
    assert.are.equal("ok", info.status)
    assert(violation(A, b, f, w) < 1e-12)
    local sum, moment = 0, 0
    for i = 1, 4 do sum = sum + f[i]; moment = moment + f[i] * xs[i] end
    assert(math.abs(sum - 9.81) < 1e-12, "forces sum to m g: " .. sum)
    assert(math.abs(moment) < 1e-12, "no net torque: " .. moment)
  end)

  it("is fine with A = 0 and b >= 0, and reports an infeasible row without NaN", function()
    local f, w, info = lcp.solve({ { 0, 0 }, { 0, 0 } }, { 1, 0 })
    assert.are.same({ 0, 0 }, f); assert.are.same({ 1, 0 }, w); assert.are.equal("ok", info.status)
    f, w, info = lcp.solve({ { 0, 0 }, { 0, 1 } }, { -1, -2 })
    assert.are.equal("infeasible", info.status)
    assert.are.equal(0, f[1]); assert.are.equal(2, f[2]); assert.are.equal(0, w[2])
  end)

  it("takes equality rows (joints): w = 0 there, f of either sign", function()
    for trial = 1, 100 do
      local n = 3 + trial % 12
      local neq = 1 + trial % 3
      local A, b = psd(n, n + 1), rand_b(n, 1)
      local f, w, info = lcp.solve(A, b, neq)
      assert.are.equal("ok", info.status)
      local v = violation(A, b, f, w, neq)
      assert(v < 1e-9, ("trial %d: violation %.3g"):format(trial, v))
    end
  end)

  it("names the argument on bad input", function()
    assert.has_error(function() lcp.solve({ { 1 } }, { 1, 2 }) end,
      "impetus.lcp.solve: argument 'A' must have as many rows as 'b' has entries (1 vs 2)")
    assert.has_error(function() lcp.solve({ { 1, "x" }, { 0, 1 } }, { 1, 2 }) end,
      "impetus.lcp.solve: argument 'A' row 1 entry 2 must be a finite number")
    assert.has_error(function() lcp.solve({ { 1 } }, { 0 / 0 }) end,
      "impetus.lcp.solve: argument 'b' entry 1 must be a finite number")
    assert.has_error(function() lcp.solve({ { 1 } }, { 1 }, 2) end, "impetus.lcp.solve: argument 'neq' must be in 0..1")
  end)
end)
