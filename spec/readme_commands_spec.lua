-- Every host command README.md and docs/*.md show (`./impetus ...` and `./build/release/bin/impetus ...`,
-- in code spans and code blocks) runs and exits 0, made short: screenshots go to a temporary file,
-- --steps is capped at 60, benchmarks take 3 steps (`./impetus bench` alone: the table, 3 steps a
-- scene), and a windowed run becomes a 30-step headless run. `./impetus test`, `build` and `hash` are
-- left to the test command and CI themselves, `fuzz` and `soak` (runs of minutes) to spec/fuzz_spec.lua
-- and the README's figures; under the sanitizers the benchmarks are left out (building 100,000
-- particles alone outlasts the 5 s watchdog).
local helpers = require "helpers"

local SANITIZED = helpers.build:match("sanitize") ~= nil

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function documents()
  local list = { helpers.root .. "/README.md" }
  local p = io.popen(string.format("ls %q/docs/*.md 2>/dev/null", helpers.root))
  for line in p:lines() do list[#list + 1] = line end
  p:close()
  return list
end

-- the text of every code span and every line of every code block, whitespace collapsed
local function snippets(text)
  local out = {}
  text = text:gsub("```[^\n]*\n(.-)```", function(block)
    for line in block:gmatch("[^\n]+") do out[#out + 1] = line end
    return ""
  end)
  for span in text:gmatch("`([^`]+)`") do out[#out + 1] = span end
  for i, s in ipairs(out) do out[i] = s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "") end
  return out
end

-- a documented command as {env, args} for helpers.run_host, or nil, why it is left out
local function shorten(snippet, tmpdir, n)
  local env, rest = "", snippet
  while true do -- leading VAR=value assignments
    local assign, after = rest:match("^(%u[%u%d_]*=%S+) (.*)$")
    if not assign then break end
    env, rest = env .. assign .. " ", after
  end
  rest = rest:match("^%./[%w/_]-impetus (.+)$")
  if not rest then return nil end
  rest = rest:gsub(" #.*$", "")
  local args = {}
  for a in rest:gmatch("%S+") do args[#args + 1] = a end
  local first = args[1]
  if first == "test" or first == "build" or first == "hash" then return nil, "left to the test command and CI" end
  if first == "fuzz" or first == "soak" then return nil, "a run of minutes (the short fuzz campaign is spec/fuzz_spec.lua)" end
  if SANITIZED and (first == "bench" or rest:match("%-%-bench")) then return nil, "a benchmark, under the sanitizers" end
  if first == "bench" and not rest:match("%.lua") and not rest:match("/") then
    return { env = env, args = "table", table = true } -- the table of every benchmark scene (tools/bench_table.lua)
  end
  local out, mode, shot = {}, nil, nil
  if first == "bench" then
    table.remove(args, 1)
    mode = "bench"
    out[#out + 1] = "--bench"
  end
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--screenshot" then
      mode, shot = "screenshot", string.format("%s/shot%d.png", tmpdir, n)
      out[#out + 1] = a
      out[#out + 1] = shot
      i = i + 1
    elseif a == "--steps" then
      local steps = tonumber(args[i + 1]) or 60
      out[#out + 1] = "--steps"
      out[#out + 1] = tostring(mode == "bench" and 3 or math.min(steps, 60))
      i = i + 1
    elseif a == "--bench" then
      mode = "bench"
      out[#out + 1] = a
    elseif a == "--headless" then
      mode = mode or "headless"
      out[#out + 1] = a
    elseif a:sub(1, 2) == "--" then
      out[#out + 1] = a
      if args[i + 1] and args[i + 1]:sub(1, 2) ~= "--" and not args[i + 1]:match("%.lua$") and not args[i + 1]:match("/$") then
        out[#out + 1] = args[i + 1]
        i = i + 1
      end
    else
      -- the scene or folder: only those in the repository (README examples such as game/ are not)
      local f = io.open(helpers.root .. "/" .. a:gsub("/$", "") .. (a:match("/$") and "/main.lua" or ""), "r")
      if not f then return nil, "no such scene in the repository: " .. a end
      f:close()
      out[#out + 1] = a
    end
    i = i + 1
  end
  if mode == "bench" and not rest:match("%-%-steps") then
    out[#out + 1] = "--steps"
    out[#out + 1] = "3"
  end
  if not mode then
    out[#out + 1] = "--headless"
    out[#out + 1] = "--steps"
    out[#out + 1] = "30"
  end
  return { env = env, args = table.concat(out, " "), screenshot = shot }
end

describe("the commands the README and docs/ show", function()
  local tmpdir = helpers.tmpdir()
  local commands, seen = {}, {}
  for _, doc in ipairs(documents()) do
    for _, s in ipairs(snippets(read(doc) or "")) do
      local c = shorten(s, tmpdir, #commands + 1)
      if c and not seen[c.env .. c.args] then
        seen[c.env .. c.args] = true
        c.doc, c.text = doc:match("[^/]+$"), s
        commands[#commands + 1] = c
      end
    end
  end
  teardown(function() os.execute("rm -rf " .. tmpdir) end)

  it("were found", function()
    assert.is_true(#commands >= 10, "host commands found: " .. #commands)
  end)

  for _, c in ipairs(commands) do
    it(c.doc .. ": " .. c.text, function()
      if c.table then -- every scene in scenes/bench/ for 3 steps: a row each, none failed
        local p = assert(io.popen("cd " .. helpers.root .. " && lua5.4 tools/bench_table.lua --steps 3 2>&1"))
        local out = p:read("a")
        local ok = p:close()
        assert.is_true(ok, out)
        local rows, scenes = 0, 0
        for _ in out:gmatch("\n[%w_]+%s+3%s+[%d.]+") do rows = rows + 1 end
        for _ in io.popen("ls " .. helpers.root .. "/scenes/bench/*.lua"):lines() do scenes = scenes + 1 end
        assert.is_true(rows >= scenes, out)
        return
      end
      local out, code = helpers.run_host(c.args, c.env ~= "" and c.env or nil)
      assert.are.equal(0, code, c.args .. "\n" .. out)
      if c.screenshot then
        local f = io.open(c.screenshot, "rb")
        assert.is_not_nil(f, "no screenshot written: " .. c.args)
        f:close()
      end
    end)
  end
end)
