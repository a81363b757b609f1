-- The ODE solvers (S3 "Differential equation basics"): the checkable results of GUIDE.md.
local impetus = require "impetus"
local helpers = require "helpers"
local ode = impetus.ode

local circle = function(x) return { -x[2], x[1] } end -- integral curves are circles
local function radius(x) return math.sqrt(x[1] ^ 2 + x[2] ^ 2) end

describe("one step on the circle field", function()
  for _, h in ipairs({ 0.1, 0.3 }) do
    it("Euler spirals out by sqrt(1 + h^2) per step, h = " .. h, function()
      helpers.near(radius(ode.step(circle, { 1, 0 }, 0, h, "euler")), math.sqrt(1 + h ^ 2), 1e-14, "radius")
    end)
    it("midpoint grows by sqrt(1 + h^4/4) per step, h = " .. h, function()
      helpers.near(radius(ode.step(circle, { 1, 0 }, 0, h, "midpoint")), math.sqrt(1 + h ^ 4 / 4), 1e-14, "radius")
    end)
    it("RK4 moves slightly inward, by sqrt(1 - h^6/72 + h^8/576), h = " .. h, function()
      local r = radius(ode.step(circle, { 1, 0 }, 0, h, "rk4"))
      helpers.near(r, math.sqrt(1 - h ^ 6 / 72 + h ^ 8 / 576), 1e-14, "radius")
      assert.is_true(r < 1)
    end)
  end

  it("Euler spirals out for any step size, however small", function()
    for _, h in ipairs({ 1e-1, 1e-2, 1e-3 }) do
      local x = ode.solve(circle, { 1, 0 }, 0, 1, { method = "euler", h = h })
      assert.is_true(radius(x) > 1)
    end
  end)
end)

describe("convergence order", function()
  -- x'' = -x from (1, 0) to t = 2: x = cos t
  local f = function(x) return { x[2], -x[1] } end
  local function err(method, h)
    local x = ode.solve(f, { 1, 0 }, 0, 2, { method = method, h = h })
    return math.abs(x[1] - math.cos(2)) + math.abs(x[2] + math.sin(2))
  end
  local expected = { euler = 2, midpoint = 4, rk4 = 16 }
  for method, ratio in pairs(expected) do
    it(method .. ": halving h divides the global error by about " .. ratio, function()
      local e1, e2, e3 = err(method, 0.02), err(method, 0.01), err(method, 0.005)
      helpers.near(e1 / e2, ratio, 0.1 * ratio, "ratio at h = 0.02 / 0.01")
      helpers.near(e2 / e3, ratio, 0.05 * ratio, "ratio at h = 0.01 / 0.005")
      assert.are.equal(ratio, 2 ^ ode.order(method))
    end)
  end
end)

describe("stability on x' = -kx (k = 10)", function()
  local k = 10
  local f = function(x) return { -k * x[1] } end
  local function trace(h, n)
    local xs, x = {}, { 1 }
    for i = 1, n do
      x = ode.step(f, x, 0, h, "euler")
      xs[i] = x[1]
    end
    return xs
  end
  it("Euler decays monotonically for h < 1/k", function()
    local xs = trace(0.09, 40)
    for i = 1, #xs do assert.is_true(xs[i] > 0 and xs[i] < (xs[i - 1] or 1)) end
  end)
  it("Euler oscillates about zero but decays for 1/k < h < 2/k", function()
    local xs = trace(0.15, 40)
    for i = 2, #xs do assert.is_true(xs[i] * xs[i - 1] < 0) end
    assert.is_true(math.abs(xs[#xs]) < 1e-6)
  end)
  it("Euler diverges for h > 2/k", function()
    local xs = trace(0.21, 40)
    assert.is_true(math.abs(xs[#xs]) > 5)
    helpers.near(math.abs(xs[1]), k * 0.21 - 1, 1e-12, "|1 - hk|")
  end)
  it("RK4 is stable up to h k = 2.78 and unstable past it", function()
    local function amp(h) return ode.solve(f, { 1 }, 0, 100 * h, { method = "rk4", h = h })[1] end
    assert.is_true(math.abs(amp(0.27)) < 1)
    assert.is_true(math.abs(amp(0.29)) > 1)
  end)
end)

describe("adaptive step size", function()
  it("follows S3's factors: (1e-4 / 1e-8)^(1/2) = 100, (1e-4 / 1e-3)^(1/2) = 0.316", function()
    helpers.near(ode.adapt_factor(1e-8, 1e-4, 1), 100, 1e-9, "growth")
    helpers.near(ode.adapt_factor(1e-3, 1e-4, 1), math.sqrt(0.1), 1e-12, "shrink")
    helpers.near(ode.adapt_factor(1e-9, 1e-4, 4), 10, 1e-9, "RK4: fifth root")
  end)

  -- x' = t: one Euler step of h from t = 0 and two of h/2 differ by exactly h^2 / 4
  local f = function(x, t) return { t } end
  it("grows the next step by 0.9 (tol / err)^(1/2) after an accurate Euler step", function()
    local h, tol = 0.002, 1e-4
    local _, info = ode.solve(f, { 0 }, 0, h, { method = "adaptive", base = "euler", h = h, tol = tol, max_growth = 1e6 })
    assert.are.equal(0, info.rejected)
    helpers.near(info.h, h * 0.9 * math.sqrt(tol / (h * h / 4)), 1e-12, "next h")
  end)
  it("rejects a step whose error exceeds the tolerance and shrinks it", function()
    local h, tol = 0.2, 1e-4
    local x, info = ode.solve(f, { 0 }, 0, h, { method = "adaptive", base = "euler", h = h, tol = tol })
    assert.is_true(info.rejected >= 1)
    helpers.near(x[1], h * h / 2, 20 * tol, "x(h) = h^2 / 2")
  end)
  it("caps growth at max_growth per step", function()
    local _, info = ode.solve(function() return { 1 } end, { 0 }, 0, 1e-3, { method = "adaptive", base = "euler",
      h = 1e-3, max_growth = 3 })
    helpers.near(info.h, 3e-3, 1e-15, "h")
  end)
  it("meets its tolerance on a smooth problem with far fewer steps than a fixed step", function()
    local g = function(x) return { x[2], -x[1] } end
    local x, info = ode.solve(g, { 1, 0 }, 0, 10, { method = "adaptive", tol = 1e-9, h = 0.01 })
    helpers.near(x[1], math.cos(10), 1e-6, "x(10)")
    assert.is_true(info.steps < 3 * 1000, "steps: " .. info.steps)
  end)
end)

describe("impetus.ode arguments", function()
  it("are checked with their names", function()
    local ok, err = pcall(ode.solve, circle, { 1, "a" }, 0, 1)
    assert.is_false(ok)
    assert.matches("argument 'x0'%[2%] must be a number", err)
    ok, err = pcall(ode.step, circle, { 1, 0 }, 0, 0.1, "rk5")
    assert.matches("method", err)
    ok, err = pcall(ode.solve, function() return { 1 } end, { 1, 0 }, 0, 1)
    assert.matches("must return a list of 2 numbers", err)
    ok, err = pcall(ode.solve, function() error("inside f") end, { 1 }, 0, 1)
    assert.matches("inside f", err)
    assert.matches("traceback", err)
  end)
end)
