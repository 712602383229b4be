# PowerPlan: PowerShell commands for the powerplan service's REST API, one or many servers at a time.
# Built only on Invoke-RestMethod; every command writes objects with a PowerPlan.* type name.
# Not run on the machines that build powerplan (they have no PowerShell): see README.md.

Set-StrictMode -Version 3.0

function ConvertTo-PlainToken {
    # The token may come as a SecureString (Read-Host -AsSecureString, SecretManagement) or a string.
    param([object]$Token)
    if ($null -eq $Token) { return $null }
    if ($Token -is [System.Security.SecureString]) {
        return [System.Net.NetworkCredential]::new('', $Token).Password
    }
    return [string]$Token
}

function Invoke-PowerPlanApi {
    # One REST call; turns the service's problem+json answer into an error that says what to do.
    param(
        [Parameter(Mandatory)][string]$ComputerName,
        [Parameter(Mandatory)][int]$Port,
        [Parameter(Mandatory)][ValidateSet('GET', 'PUT', 'POST')][string]$Method,
        [Parameter(Mandatory)][string]$Path,
        [hashtable]$Body,
        [object]$Token,
        [switch]$UseSsl,
        [int]$TimeoutSec = 30
    )
    $scheme = if ($UseSsl) { 'https' } else { 'http' }
    $request = @{
        Uri         = "${scheme}://${ComputerName}:${Port}${Path}"
        Method      = $Method
        Headers     = @{ Accept = 'application/json' }
        TimeoutSec  = $TimeoutSec
        ErrorAction = 'Stop'
    }
    $plain = ConvertTo-PlainToken $Token
    if ($plain) { $request.Headers.Authorization = "Bearer $plain" }
    if ($PSBoundParameters.ContainsKey('Body')) {
        $request.Body = $Body | ConvertTo-Json -Compress -Depth 5
        $request.ContentType = 'application/json'
    }
    try {
        Invoke-RestMethod @request
    }
    catch {
        $problem = $null
        if ($_.ErrorDetails -and $_.ErrorDetails.Message) {
            try { $problem = $_.ErrorDetails.Message | ConvertFrom-Json } catch { $problem = $null }
        }
        if ($problem -and $problem.PSObject.Properties['detail']) {
            throw "${ComputerName}: $($problem.title) ($($problem.status) $($problem.code)): $($problem.detail)"
        }
        throw "${ComputerName}: $($_.Exception.Message)"
    }
}

function Get-PowerPlanStatus {
    <#
    .SYNOPSIS
    Gets the active power plan of one or more servers.

    .DESCRIPTION
    Asks the powerplan service on each computer for the plan in force, its processor settings
    (minimum and maximum processor state, EPP), who owns the policy and whether it can be changed.

    .PARAMETER ComputerName
    Servers running the powerplan service. Default: localhost. Takes pipeline input, also by
    property name (ComputerName, CN, Name, DNSHostName), so Get-ADComputer output can be piped in.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token (SecureString or string), needed when the service has a token file.

    .PARAMETER UseSsl
    Use https (the service is started with POWERPLAN_TLS_CERT and POWERPLAN_TLS_KEY).

    .EXAMPLE
    Get-PowerPlanStatus -ComputerName sql01, sql02 -Token $token

    .EXAMPLE
    Get-ADComputer -Filter 'Name -like "sql*"' | Get-PowerPlanStatus -Token $token | Where-Object Kind -ne 'high-performance'

    .OUTPUTS
    PowerPlan.Status
    #>
    [CmdletBinding()]
    [OutputType('PowerPlan.Status')]
    param(
        [Parameter(Position = 0, ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            $r = Invoke-PowerPlanApi -ComputerName $computer -Port $Port -Method GET -Path '/v1/plans/active' -Token $Token -UseSsl:$UseSsl
            $p = $r.processor
            [pscustomobject]@{
                PSTypeName          = 'PowerPlan.Status'
                ComputerName        = $computer
                PlanName            = if ($r.plan) { $r.plan.name } else { $null }
                Kind                = if ($r.plan) { $r.plan.kind } else { $null }
                PlanId              = if ($r.plan) { $r.plan.id } else { $null }
                Owner               = $r.owner
                PolicyManaged       = $r.policyManaged
                CanSet              = $r.canSet
                MinProcessorStateAC = if ($p.minStatePercent) { $p.minStatePercent.ac } else { $null }
                MaxProcessorStateAC = if ($p.maxStatePercent) { $p.maxStatePercent.ac } else { $null }
                Governor            = $p.governor
                Raw                 = $r
            }
        }
    }
}

function Set-PowerPlan {
    <#
    .SYNOPSIS
    Sets the active power plan on one or more servers.

    .DESCRIPTION
    Asks the service on each computer what would change (a dry run), then, unless -WhatIf is given
    or -Confirm is declined, makes the change. Setting the plan already active changes nothing and
    answers Changed = False. -WhatIf shows the change the service reports for its dry run.

    .PARAMETER Plan
    The plan: a Windows GUID, a kind alias (high-performance, ultimate-performance, balanced,
    power-saver), a powercfg alias (SCHEME_MIN, SCHEME_MAX, SCHEME_BALANCED) or the exact plan name.

    .PARAMETER Create
    Create the plan first when it is a well-known plan that is not installed (Ultimate Performance).

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the control scope (SecureString or string).

    .PARAMETER UseSsl
    Use https.

    .EXAMPLE
    Set-PowerPlan -Plan high-performance -ComputerName sql01, sql02 -Token $token -WhatIf

    .EXAMPLE
    Import-Csv servers.csv | Set-PowerPlan -Plan ultimate-performance -Create -Token $token -Confirm

    .OUTPUTS
    PowerPlan.SetResult
    #>
    [CmdletBinding(SupportsShouldProcess, ConfirmImpact = 'Medium')]
    [OutputType('PowerPlan.SetResult')]
    param(
        [Parameter(Mandatory, Position = 0)]
        [ValidateNotNullOrEmpty()]
        [string]$Plan,
        [switch]$Create,
        [Parameter(ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            $api = @{ ComputerName = $computer; Port = $Port; Method = 'PUT'; Path = '/v1/plans/active'; Token = $Token; UseSsl = $UseSsl }
            $body = @{ plan = $Plan; create = [bool]$Create }
            $dry = Invoke-PowerPlanApi @api -Body ($body + @{ dryRun = $true })
            $result = $dry
            if ($dry.changed) {
                $change = "switch from $($dry.before.name) ($($dry.before.id)) to $($dry.after.name) ($($dry.after.id))"
                if ($PSCmdlet.ShouldProcess($computer, $change)) {
                    $result = Invoke-PowerPlanApi @api -Body ($body + @{ dryRun = $false })
                }
            }
            if ($result.PSObject.Properties['warnings']) {
                foreach ($w in $result.warnings) { Write-Warning "${computer}: $w" }
            }
            [pscustomobject]@{
                PSTypeName   = 'PowerPlan.SetResult'
                ComputerName = $computer
                Changed      = $result.changed
                DryRun       = $result.dryRun
                Before       = $result.before.name
                After        = $result.after.name
                AfterId      = $result.after.id
                Raw          = $result
            }
        }
    }
}

function Invoke-PowerPlanBenchmark {
    <#
    .SYNOPSIS
    Runs the short CPU benchmark on one or more servers.

    .DESCRIPTION
    Measures what the power plan costs: how much slower a burst of work runs after the CPU was
    idle than on a warm core, and sustained single-thread and all-core throughput. It loads every
    CPU for a few seconds; the service refuses when the CPU is already busy unless -Force is given.

    .PARAMETER BenchmarkProfile
    quick (default, about 5 s) or standard (about 20 s).

    .PARAMETER Force
    Run even when the CPU is already over 30% busy.

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the benchmark scope (SecureString or string).

    .PARAMETER UseSsl
    Use https.

    .EXAMPLE
    Invoke-PowerPlanBenchmark -ComputerName sql01 -Token $token | Format-List

    .OUTPUTS
    PowerPlan.BenchmarkResult
    #>
    [CmdletBinding(SupportsShouldProcess, ConfirmImpact = 'Low')]
    [OutputType('PowerPlan.BenchmarkResult')]
    param(
        [ValidateSet('quick', 'standard')][string]$BenchmarkProfile = 'quick',
        [switch]$Force,
        [Parameter(ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            if (-not $PSCmdlet.ShouldProcess($computer, "run the $BenchmarkProfile CPU benchmark")) { continue }
            $r = Invoke-PowerPlanApi -ComputerName $computer -Port $Port -Method POST -Path '/v1/benchmarks' `
                -Body @{ profile = $BenchmarkProfile; force = [bool]$Force } -Token $Token -UseSsl:$UseSsl -TimeoutSec 120
            foreach ($w in $r.warnings) { Write-Warning "${computer}: $w" }
            [pscustomobject]@{
                PSTypeName          = 'PowerPlan.BenchmarkResult'
                ComputerName        = $computer
                Id                  = $r.id
                Plan                = $r.summary.plan
                BurstPenaltyPercent = $r.summary.burstPenaltyPercent
                SingleThreadMops    = $r.summary.singleThreadMops
                AllCoreMops         = $r.summary.allCoreMops
                Noisy               = $r.summary.noisy
                Raw                 = $r
            }
        }
    }
}

function Get-PowerPlanRecommendation {
    <#
    .SYNOPSIS
    Gets the recommended power plan for a workload on one or more servers, with its reasons.

    .PARAMETER Workload
    database (default), batch, latency or energy-saving.

    .PARAMETER Benchmark
    latest (default: a recent stored benchmark), run (measure now; benchmark scope) or none (rules only).

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the read scope (SecureString or string).

    .PARAMETER UseSsl
    Use https.

    .EXAMPLE
    Get-PowerPlanRecommendation -ComputerName sql01, sql02 -Token $token | Where-Object ChangeRecommended

    .EXAMPLE
    Get-PowerPlanRecommendation sql01 -Token $token | Select-Object -ExpandProperty Reasons

    .OUTPUTS
    PowerPlan.Recommendation
    #>
    [CmdletBinding()]
    [OutputType('PowerPlan.Recommendation')]
    param(
        [ValidateSet('database', 'batch', 'latency', 'energy-saving')][string]$Workload = 'database',
        [ValidateSet('latest', 'run', 'none')][string]$Benchmark = 'latest',
        [Parameter(Position = 0, ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            $r = Invoke-PowerPlanApi -ComputerName $computer -Port $Port -Method GET `
                -Path "/v1/recommendation?workload=$Workload&benchmark=$Benchmark" -Token $Token -UseSsl:$UseSsl -TimeoutSec 120
            [pscustomobject]@{
                PSTypeName        = 'PowerPlan.Recommendation'
                ComputerName      = $computer
                Summary           = $r.summary
                ChangeRecommended = $r.changeRecommended
                Recommended       = if ($r.recommended) { $r.recommended.name } else { $null }
                RecommendedId     = if ($r.recommended) { $r.recommended.id } else { $null }
                Confidence        = $r.confidence
                Reasons           = @($r.reasons | ForEach-Object { $_.text })
                Raw               = $r
            }
        }
    }
}

Export-ModuleMember -Function Get-PowerPlanStatus, Set-PowerPlan, Invoke-PowerPlanBenchmark, Get-PowerPlanRecommendation
