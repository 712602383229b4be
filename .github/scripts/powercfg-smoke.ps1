# Smoke test of the Windows backend against the real powercfg (CI, windows-latest; Windows
# PowerShell 5.1 or PowerShell 7): list the plans, read the active one, switch to High performance
# through powerplan, read it back from both powerplan and powercfg, and always put the original
# plan back. Exits non-zero on the first thing that is not as expected.
[CmdletBinding()]
param([string]$Repo = (Resolve-Path (Join-Path $PSScriptRoot '../..')).Path)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3.0
$HighPerformance = '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c'
$state = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-smoke-$PID"

function Invoke-PowerPlanCli {
    param([string[]]$Arguments)
    $env:POWERPLAN_STATE_DIR = $state
    $env:POWERPLAN_BACKEND = 'windows'
    $out = & node (Join-Path $Repo 'bin/powerplan.js') @Arguments --json
    if ($LASTEXITCODE -ne 0) { throw "powerplan $($Arguments -join ' ') failed ($LASTEXITCODE): $out" }
    ($out -join "`n") | ConvertFrom-Json
}

function Get-PowercfgActive {
    # "Power Scheme GUID: <guid>  (<name>)" in every language: the GUID is the stable token.
    $line = (powercfg /getactivescheme) -join ' '
    if ($line -notmatch '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})') { throw "powercfg /getactivescheme said: $line" }
    $Matches[1].ToLowerInvariant()
}

$original = Get-PowercfgActive
Write-Host "active before: $original"
try {
    $plans = Invoke-PowerPlanCli @('plans')
    Write-Host ("plans: " + (($plans.plans | ForEach-Object { "$($_.name) ($($_.id), $($_.kind))" }) -join '; '))
    if (@($plans.plans).Count -lt 1) { throw 'powerplan listed no plans' }
    if ($plans.activePlanId -ne $original) { throw "powerplan says $($plans.activePlanId) is active, powercfg says $original" }
    if (-not ($plans.plans | Where-Object { $_.id -eq $HighPerformance })) { throw 'High performance is not installed on this machine' }

    $active = Invoke-PowerPlanCli @('active')
    Write-Host "active: $($active.plan.name), min processor state AC $($active.processor.minStatePercent.ac)%"
    if ($active.plan.id -ne $original) { throw "active plan $($active.plan.id) is not $original" }

    $set = Invoke-PowerPlanCli @('set', $HighPerformance)
    Write-Host "set: $($set.before.name) -> $($set.after.name) (changed: $($set.changed))"
    if ($set.after.id -ne $HighPerformance) { throw "set answered $($set.after.id)" }
    if ((Get-PowercfgActive) -ne $HighPerformance) { throw "powercfg says $(Get-PowercfgActive) after the switch" }
    if ((Invoke-PowerPlanCli @('active')).plan.id -ne $HighPerformance) { throw 'powerplan does not read High performance back' }
}
finally {
    powercfg /setactive $original
    Remove-Item -Recurse -Force $state -ErrorAction SilentlyContinue
}
if ((Get-PowercfgActive) -ne $original) { throw "the original plan $original was not restored" }
Write-Host "restored: $original"
