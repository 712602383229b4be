# PowerPlan: PowerShell commands for the powerplan service's REST API, one or many servers at a time.
# Built only on Invoke-WebRequest; every command writes objects with a PowerPlan.* type name.
# Keeps to what Windows PowerShell 5.1 understands (a test parses it and rejects 7-only syntax);
# tested with Pester under PowerShell 7 on Linux and, in CI, under 5.1 and 7 on Windows.

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

function Get-PowerPlanControlPath {
    # The control channel of this computer's service, for a loopback name: POWERPLAN_CONTROL_SOCKET,
    # else on Windows the named pipe \\.\pipe\powerplan, elsewhere the Unix socket
    # control/powerplan.sock in the state directory (POWERPLAN_STATE_DIR, else /var/lib/powerplan).
    # The OS lets only the service's user and root / an elevated session open it, and a caller on it
    # has control without sending any credential (docs/SECURITY.md, "Local control").
    param([string]$ComputerName)
    if ($ComputerName -notin @('localhost', '127.0.0.1', '::1', '[::1]')) { return $null }
    if ($env:POWERPLAN_CONTROL_SOCKET) { return $env:POWERPLAN_CONTROL_SOCKET }
    if ([System.Environment]::OSVersion.Platform -eq [System.PlatformID]::Win32NT) { return '\\.\pipe\powerplan' }
    $dir = $env:POWERPLAN_STATE_DIR
    if (-not $dir) { $dir = '/var/lib/powerplan' }
    [System.IO.Path]::Combine($dir, 'control', 'powerplan.sock')
}

function Open-PowerPlanControlStream {
    # A stream on the control channel, or $null when this session may not open it (not elevated,
    # not root or the service's user) or nothing serves it (the service is down): the call then
    # goes over TCP without a token, which the service answers for reading only. A pipe must be
    # owned by SYSTEM or Administrators and a socket's directory by root or this user with no access
    # for others; a pipe that another user created first (while the service was down) is closed
    # before anything is sent, and the call fails saying so.
    param([string]$Path, [int]$TimeoutSec)
    if ($Path.StartsWith('\\.\pipe\')) {
        $pipe = New-Object System.IO.Pipes.NamedPipeClientStream -ArgumentList '.', $Path.Substring(9), ([System.IO.Pipes.PipeDirection]::InOut)
        try { $pipe.Connect(1000) }
        catch { Remove-CaughtError $_; $pipe.Dispose(); return $null }
        if ($PSVersionTable.PSEdition -eq 'Core') { $acl = [System.IO.Pipes.PipesAclExtensions]::GetAccessControl($pipe) }
        else { $acl = $pipe.GetAccessControl() }
        $owner = $acl.GetOwner([System.Security.Principal.SecurityIdentifier]).Value
        if ($owner -notin @('S-1-5-18', 'S-1-5-32-544')) {
            $pipe.Dispose()
            throw "The pipe $Path belongs to $owner, not to SYSTEM or Administrators: another program serves it, not the powerplan service; nothing was sent. Stop that program and restart the service."
        }
        $pipe.ReadTimeout = $TimeoutSec * 1000
        return $pipe
    }
    $dir = [System.IO.Path]::GetDirectoryName($Path)
    $item = Get-Item -LiteralPath $dir -Force -ErrorAction SilentlyContinue
    if (-not $item -or -not $item.PSIsContainer) { return $null }
    if ($item.User -notin @('root', [System.Environment]::UserName) -or ([int]$item.UnixFileMode -band 63)) { return $null }
    $socket = New-Object System.Net.Sockets.Socket -ArgumentList ([System.Net.Sockets.AddressFamily]::Unix), ([System.Net.Sockets.SocketType]::Stream), ([System.Net.Sockets.ProtocolType]::Unspecified)
    try { $socket.Connect((New-Object System.Net.Sockets.UnixDomainSocketEndPoint -ArgumentList $Path)) }
    catch { Remove-CaughtError $_; $socket.Dispose(); return $null }
    $socket.ReceiveTimeout = $TimeoutSec * 1000
    New-Object System.Net.Sockets.NetworkStream -ArgumentList $socket, $true
}

function Invoke-PowerPlanControlRequest {
    # One HTTP/1.0 request on a control stream (so the answer is never chunked and ends when the
    # service closes the connection); answers @{ Status; Text }, the body read as UTF-8.
    param([System.IO.Stream]$Stream, [string]$Method, [string]$Path, [byte[]]$Body)
    $buffer = New-Object System.IO.MemoryStream
    try {
        $head = "$Method $Path HTTP/1.0`r`nHost: localhost`r`nAccept: application/json`r`n"
        if ($null -ne $Body) { $head += "Content-Type: application/json; charset=utf-8`r`nContent-Length: $($Body.Length)`r`n" }
        $bytes = [System.Text.Encoding]::ASCII.GetBytes("$head`r`n")
        $Stream.Write($bytes, 0, $bytes.Length)
        if ($null -ne $Body) { $Stream.Write($Body, 0, $Body.Length) }
        $Stream.Flush()
        $Stream.CopyTo($buffer)
    }
    finally { $Stream.Dispose() }
    $text = [System.Text.Encoding]::UTF8.GetString($buffer.ToArray())
    $end = $text.IndexOf("`r`n`r`n")
    if ($text -notmatch '^HTTP/1\.[01] (\d{3})' -or $end -lt 0) { throw "The control channel gave no HTTP answer." }
    @{ Status = [int]$Matches[1]; Text = $text.Substring($end + 4) }
}

function Get-PowerPlanErrorCategory {
    # The PowerShell error category for an HTTP status of the service (0: no answer at all).
    param([int]$Status)
    switch ($Status) {
        0 { return [System.Management.Automation.ErrorCategory]::ConnectionError }
        400 { return [System.Management.Automation.ErrorCategory]::InvalidArgument }
        401 { return [System.Management.Automation.ErrorCategory]::AuthenticationError }
        403 { return [System.Management.Automation.ErrorCategory]::PermissionDenied }
        404 { return [System.Management.Automation.ErrorCategory]::ObjectNotFound }
        409 { return [System.Management.Automation.ErrorCategory]::ResourceBusy }
        415 { return [System.Management.Automation.ErrorCategory]::InvalidArgument }
        422 { return [System.Management.Automation.ErrorCategory]::InvalidArgument }
        429 { return [System.Management.Automation.ErrorCategory]::LimitsExceeded }
        503 { return [System.Management.Automation.ErrorCategory]::ResourceUnavailable }
        504 { return [System.Management.Automation.ErrorCategory]::OperationTimeout }
    }
    return [System.Management.Automation.ErrorCategory]::NotSpecified
}

function New-PowerPlanErrorRecord {
    # The one ErrorRecord of a failure: the message whole (the service's problem detail as sent,
    # placeholders such as <token> included), the error id PowerPlan.<code>, the category from the
    # HTTP status, the computer as target object, the problem+json answer in the exception's Problem.
    param([string]$ComputerName, [string]$Message, [string]$Code, [int]$Status, [object]$Problem, [System.Exception]$InnerException)
    $exception = New-Object System.InvalidOperationException -ArgumentList $Message, $InnerException
    Add-Member -InputObject $exception -MemberType NoteProperty -Name Problem -Value $Problem
    $record = New-Object System.Management.Automation.ErrorRecord -ArgumentList $exception, "PowerPlan.$Code", (Get-PowerPlanErrorCategory $Status), $ComputerName
    $record.ErrorDetails = New-Object System.Management.Automation.ErrorDetails -ArgumentList $Message
    $record
}

function Remove-CaughtError {
    # A failure caught here is replaced by the module's own ErrorRecord (which keeps it as its inner
    # exception), so $Error holds one record per failure, not the web cmdlet's as well.
    param([System.Management.Automation.ErrorRecord]$Caught)
    $errors = $global:Error
    for ($i = 0; $i -lt $errors.Count; $i++) {
        $e = $errors[$i]
        if ($e -is [System.Management.Automation.ErrorRecord] -and [object]::ReferenceEquals($e.Exception, $Caught.Exception)) {
            $errors.RemoveAt($i)
            return
        }
    }
}

function Get-PowerPlanUri {
    # The service's address on a computer; a name that is no host name is refused before any call.
    param([string]$ComputerName, [int]$Port, [string]$Path, [bool]$UseSsl)
    $scheme = 'http'
    if ($UseSsl) { $scheme = 'https' }
    switch ([System.Uri]::CheckHostName($ComputerName)) {
        'Dns' { $hostPart = $ComputerName }
        'IPv4' { $hostPart = $ComputerName }
        'IPv6' { $hostPart = "[$($ComputerName.Trim('[', ']'))]" }
        default { return $null }
    }
    "${scheme}://${hostPart}:${Port}${Path}"
}

function Invoke-PowerPlanApi {
    # One REST call for the command whose $PSCmdlet is given, to the service on -ComputerName
    # reached as the command's -Port, -Token and -UseSsl say ($PSBoundParameters given as
    # -Connection; the port defaults to 8750 as in every command). Bodies go out and answers are read as
    # UTF-8 bytes (Windows PowerShell 5.1 would send and read strings as ISO-8859-1, mangling plan
    # names such as "Höchstleistung"). A failure is that command's terminating error (it stops the
    # pipeline whatever -ErrorAction says): one ErrorRecord from New-PowerPlanErrorRecord. Not an
    # advanced function on purpose: an error thrown by a nested advanced function would end only
    # the statement that called it, and the command would go on.
    param(
        [System.Management.Automation.PSCmdlet]$Cmdlet,
        [System.Collections.IDictionary]$Connection,
        [string]$ComputerName,
        [ValidateSet('GET', 'PUT', 'POST', 'DELETE')][string]$Method,
        [string]$Path,
        [hashtable]$Body,
        [int]$TimeoutSec = 30
    )
    $Port = 8750
    if ($Connection.ContainsKey('Port')) { $Port = $Connection['Port'] }
    $Token = $null
    if ($Connection.ContainsKey('Token')) { $Token = $Connection['Token'] }
    $UseSsl = $Connection.ContainsKey('UseSsl') -and [bool]$Connection['UseSsl']
    $uri = Get-PowerPlanUri -ComputerName $ComputerName -Port $Port -Path $Path -UseSsl $UseSsl
    if (-not $uri) {
        $Cmdlet.ThrowTerminatingError((New-PowerPlanErrorRecord -ComputerName $ComputerName -Code 'invalid_computer_name' -Status 400 `
                    -Message "${ComputerName}: not a host name or IP address (give the port with -Port)."))
    }
    if ($UseSsl -and $PSVersionTable.PSEdition -ne 'Core') {
        # Windows PowerShell 5.1 on older .NET Framework settings offers only SSL 3 / TLS 1.0.
        [System.Net.ServicePointManager]::SecurityProtocol = [System.Net.ServicePointManager]::SecurityProtocol -bor [System.Net.SecurityProtocolType]::Tls12
    }
    $request = @{
        Uri             = $uri
        Method          = $Method
        Headers         = @{ Accept = 'application/json' }
        TimeoutSec      = $TimeoutSec
        UseBasicParsing = $true
        ErrorAction     = 'Stop'
    }
    if ($PSVersionTable.PSVersion.Major -ge 6) {
        # PowerShell 7 answers an HTTP error with the body as it came (its error details drop
        # anything between < and >, such as <token>); 5.1 keeps the body whole in ErrorDetails.
        $request.SkipHttpErrorCheck = $true
    }
    # Without a token, this computer's service is asked over its control channel when this session
    # may open it; a token goes only over TCP, to the address given.
    $plain = ConvertTo-PlainToken $Token
    $control = $null
    if (-not $plain -and -not $UseSsl) { $control = Get-PowerPlanControlPath $ComputerName }
    if ($plain) { $request.Headers.Authorization = "Bearer $plain" }
    if ($null -ne $Body) {
        $request.Body = [System.Text.Encoding]::UTF8.GetBytes(($Body | ConvertTo-Json -Compress -Depth 5))
        $request.ContentType = 'application/json; charset=utf-8'
    }
    $status = 0
    $text = $null
    $failure = $null
    try {
        $stream = $null
        if ($control) { $stream = Open-PowerPlanControlStream -Path $control -TimeoutSec $TimeoutSec }
        if ($stream) {
            $answer = Invoke-PowerPlanControlRequest -Stream $stream -Method $Method -Path $Path -Body $request['Body']
            $status = $answer.Status
            $text = $answer.Text
        }
        else {
            $response = Invoke-WebRequest @request
            $status = [int]$response.StatusCode
            $text = [System.Text.Encoding]::UTF8.GetString($response.RawContentStream.ToArray())
        }
    }
    catch {
        $failure = $_
        Remove-CaughtError $failure
        if ($failure.Exception.PSObject.Properties['Response'] -and $failure.Exception.Response) {
            $status = [int]$failure.Exception.Response.StatusCode
            if ($failure.ErrorDetails) { $text = $failure.ErrorDetails.Message }
        }
    }
    if ($status -ge 200 -and $status -lt 300) {
        if ($text) { return ($text | ConvertFrom-Json) }
        return
    }
    $problem = $null
    if ($text) {
        try { $problem = $text | ConvertFrom-Json } catch { Remove-CaughtError $_; $problem = $null }
    }
    $inner = $null
    if ($failure) { $inner = $failure.Exception }
    if ($problem -and $problem.PSObject.Properties['detail']) {
        $code = 'http_error'
        if ($problem.PSObject.Properties['code']) { $code = $problem.code }
        $message = "${ComputerName}: $($problem.title) ($($problem.status) $code): $($problem.detail)"
    }
    elseif ($status -ne 0) {
        $code = 'http_error'
        $message = "${ComputerName}: HTTP $status from $uri, not the powerplan service's answer."
    }
    else {
        $code = 'connection_failed'
        # The innermost exception says why (an untrusted certificate, a refused connection).
        $why = $failure.Exception.Message
        $base = $failure.Exception.GetBaseException().Message
        if ($base -and -not $why.Contains($base)) { $why = "$why $base" }
        if ($UseSsl -and $why -match 'certificate|SSL|TLS|trust') {
            $why += " Trust the service's certificate on this computer (Get-Help Get-PowerPlanStatus -Parameter UseSsl)."
        }
        $message = "${ComputerName}: $why"
    }
    $Cmdlet.ThrowTerminatingError((New-PowerPlanErrorRecord -ComputerName $ComputerName -Message $message -Code $code -Status $status -Problem $problem -InnerException $inner))
}

function Write-PowerPlanWarning {
    # The service's warnings of an answer (a plan that did not take full effect, a noisy
    # measurement), each as a warning naming the computer.
    param([string]$ComputerName, [object]$Answer)
    if ($null -eq $Answer -or -not $Answer.PSObject.Properties['warnings']) { return }
    foreach ($w in $Answer.warnings) { Write-Warning "${ComputerName}: $w" }
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
    Use https (the service is started with POWERPLAN_TLS_CERT and POWERPLAN_TLS_KEY). The service's
    certificate must be trusted by this computer, like any https site's: on Windows import it (or
    the CA that issued it) into Trusted Root Certification Authorities, e.g.
    Import-Certificate -FilePath powerplan.crt -CertStoreLocation Cert:\LocalMachine\Root, or deploy
    it by group policy; on Linux add it to the system's CA store (update-ca-certificates). The name
    given as -ComputerName must be one the certificate is issued for. There is no switch to skip
    the check.

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
            $r = Invoke-PowerPlanApi -Cmdlet $PSCmdlet -Connection $PSBoundParameters -ComputerName $computer -Method GET -Path '/v1/plans/active'
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
    or -Confirm is declined, makes the change. The result says what happened: Changed is True only
    when the plan was switched; DryRun is True only when the change was shown and not made
    (-WhatIf, or "No" at the -Confirm prompt). Setting the plan already active changes nothing,
    asks nothing, and answers Changed = False, DryRun = False.

    A failure (an unknown plan, a refusal, an unreachable computer) is a terminating error: it
    stops the command, and the computers after the failing one are not asked.

    .PARAMETER Plan
    The plan: a Windows GUID, a kind alias (high-performance, ultimate-performance, balanced,
    power-saver), a powercfg alias (SCHEME_MIN, SCHEME_MAX, SCHEME_BALANCED) or the exact plan name.

    .PARAMETER Create
    Create the plan first when it is a well-known plan that is not installed (Ultimate Performance).

    .PARAMETER Force
    Set the plan even when holds are in force (they end, and nothing is restored afterwards) or
    when the service enforces another desired plan. Without it the service refuses such a change
    with PowerPlan.conflict, naming the holds or the desired plan.

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the control scope (SecureString or string).

    .PARAMETER UseSsl
    Use https; the service's certificate must be trusted here (see Get-Help Get-PowerPlanStatus -Parameter UseSsl).

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
            $api = @{ Cmdlet = $PSCmdlet; Connection = $PSBoundParameters; ComputerName = $computer; Method = 'PUT'; Path = '/v1/plans/active' }
            $body = @{ plan = $Plan; create = [bool]$Create; force = [bool]$Force }
            $dry = Invoke-PowerPlanApi @api -Body ($body + @{ dryRun = $true })
            $result = $dry
            $dryRun = $false
            if ($dry.changed) {
                $change = "switch from $($dry.before.name) ($($dry.before.id)) to $($dry.after.name) ($($dry.after.id))"
                if ($PSCmdlet.ShouldProcess($computer, $change)) {
                    $result = Invoke-PowerPlanApi @api -Body ($body + @{ dryRun = $false })
                }
                else {
                    $dryRun = $true
                }
            }
            Write-PowerPlanWarning $computer $result
            [pscustomobject]@{
                PSTypeName   = 'PowerPlan.SetResult'
                ComputerName = $computer
                Changed      = [bool]($result.changed -and -not $dryRun)
                DryRun       = $dryRun
                Before       = $result.before.name
                BeforeId     = $result.before.id
                After        = $result.after.name
                AfterId      = $result.after.id
                Raw          = $result
            }
        }
    }
}

function Test-PowerPlan {
    <#
    .SYNOPSIS
    Tests whether the expected power plan is active on one or more servers: $true or $false.

    .DESCRIPTION
    Reads the plan in force on each computer (read scope) and compares it with the plan given by
    -Plan (its id or exact name) or with one of the kinds given by -Kind. Writes $true or $false
    per computer, so it reads as a check in Pester or dbachecks:

        Test-PowerPlan -ComputerName sql01 -Kind high-performance | Should -BeTrue

    -Detailed writes a PowerPlan.TestResult instead, with the reason (Compliant, Expected, the
    active plan's name, id and kind, Reason). A computer that does not answer is a terminating
    error, not $false: "could not ask" is not "not compliant".

    .PARAMETER Plan
    The expected plan, by id (a Windows GUID, braces and case do not matter; a tuned or
    power-profiles-daemon profile) or by its exact name (case-insensitive). For a kind alias
    such as high-performance, use -Kind.

    .PARAMETER Kind
    The expected kind of plan, one or more of ultimate-performance, high-performance, balanced,
    power-saver, custom; the active plan must be one of them.

    .PARAMETER Detailed
    Write a PowerPlan.TestResult with the reason instead of $true/$false.

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the read scope (SecureString or string).

    .PARAMETER UseSsl
    Use https; the service's certificate must be trusted here (see Get-Help Get-PowerPlanStatus -Parameter UseSsl).

    .EXAMPLE
    Test-PowerPlan -Kind high-performance, ultimate-performance -ComputerName sql01

    .EXAMPLE
    Test-PowerPlan -Plan 8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c -ComputerName sql01, sql02 -Token $token -Detailed | Where-Object { -not $_.Compliant }

    .EXAMPLE
    # In a Pester (or dbachecks) test file:
    It "runs a high performance plan" { $r = Test-PowerPlan -Kind high-performance -Detailed; $r.Compliant | Should -BeTrue -Because $r.Reason }

    .OUTPUTS
    System.Boolean, or PowerPlan.TestResult with -Detailed
    #>
    [CmdletBinding(DefaultParameterSetName = 'Kind')]
    [OutputType([bool])]
    [OutputType('PowerPlan.TestResult')]
    param(
        [Parameter(Mandatory, Position = 0, ParameterSetName = 'Plan')]
        [ValidateNotNullOrEmpty()]
        [string]$Plan,
        [Parameter(Mandatory, ParameterSetName = 'Kind')]
        [ValidateSet('ultimate-performance', 'high-performance', 'balanced', 'power-saver', 'custom')]
        [string[]]$Kind,
        [switch]$Detailed,
        [Parameter(ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            $list = Invoke-PowerPlanApi -Cmdlet $PSCmdlet -Connection $PSBoundParameters -ComputerName $computer -Method GET -Path '/v1/plans'
            $active = @($list.plans | Where-Object { $_.active }) | Select-Object -First 1
            if ($active) { $now = "$($active.name) ($($active.id), $($active.kind)) is active" }
            else { $now = 'no plan is active' }
            if ($PSCmdlet.ParameterSetName -eq 'Plan') {
                $expected = $Plan
                $id = $Plan.Trim().Trim('{', '}')
                $wanted = @($list.plans | Where-Object { $_.id -eq $id -or $_.name -eq $Plan })
                $compliant = [bool]($active -and ($wanted | Where-Object { $_.id -eq $active.id }))
                if ($compliant) { $reason = "$now, as expected." }
                elseif ($wanted.Count -eq 0) {
                    $reason = "$now; no plan '$Plan' is installed (plans: $((@($list.plans | ForEach-Object { "$($_.name) ($($_.id))" })) -join ', '))."
                }
                else { $reason = "$now, not $($wanted[0].name) ($($wanted[0].id))." }
            }
            else {
                $expected = $Kind -join ' or '
                $compliant = [bool]($active -and ($Kind -contains $active.kind))
                if ($compliant) { $reason = "$now, as expected ($expected)." }
                else { $reason = "$now, not $expected." }
            }
            if (-not $Detailed) { $compliant; continue }
            [pscustomobject]@{
                PSTypeName   = 'PowerPlan.TestResult'
                ComputerName = $computer
                Compliant    = $compliant
                Expected     = $expected
                ActivePlan   = if ($active) { $active.name } else { $null }
                ActiveId     = if ($active) { $active.id } else { $null }
                ActiveKind   = if ($active) { $active.kind } else { $null }
                Reason       = "${computer}: $reason"
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
    Use https; the service's certificate must be trusted here (see Get-Help Get-PowerPlanStatus -Parameter UseSsl).

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
            $r = Invoke-PowerPlanApi -Cmdlet $PSCmdlet -Connection $PSBoundParameters -ComputerName $computer -Method POST -Path '/v1/benchmarks' `
                -Body @{ profile = $BenchmarkProfile; force = [bool]$Force } -TimeoutSec 120
            Write-PowerPlanWarning $computer $r
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
    latest (default: a recent benchmark stored under the active plan) or none (rules only). Asking
    never runs a benchmark: to measure now, run Invoke-PowerPlanBenchmark first.

    .PARAMETER ComputerName
    Servers running the powerplan service (default localhost); pipeline input by property name.

    .PARAMETER Port
    The service's port (default 8750).

    .PARAMETER Token
    Bearer token with the read scope (SecureString or string).

    .PARAMETER UseSsl
    Use https; the service's certificate must be trusted here (see Get-Help Get-PowerPlanStatus -Parameter UseSsl).

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
        [ValidateSet('latest', 'none')][string]$Benchmark = 'latest',
        [Parameter(Position = 0, ValueFromPipeline, ValueFromPipelineByPropertyName)]
        [Alias('CN', 'Name', 'DNSHostName')]
        [string[]]$ComputerName = 'localhost',
        [ValidateRange(1, 65535)][int]$Port = 8750,
        [object]$Token,
        [switch]$UseSsl
    )
    process {
        foreach ($computer in $ComputerName) {
            $r = Invoke-PowerPlanApi -Cmdlet $PSCmdlet -Connection $PSBoundParameters -ComputerName $computer -Method GET `
                -Path "/v1/recommendation?workload=$Workload&benchmark=$Benchmark"
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

# A DSC resource (class-based, Windows PowerShell 5.1's LCM, Invoke-DscResource or Azure Machine
# Configuration) on top of the commands: the node's own service makes the plan the active one.
# Test asks the service for a dry run, so "compliant" means exactly what Set-PowerPlan would not
# change; the LCM runs as SYSTEM, which may open the service's control pipe.
[DscResource()]
class PowerPlan {
    # One power plan per node.
    [DscProperty(Key)]
    [ValidateSet('Yes')]
    [string]$IsSingleInstance = 'Yes'

    # The plan, as Set-PowerPlan takes it (GUID, kind alias, powercfg alias or exact name).
    [DscProperty(Mandatory)]
    [string]$Plan

    # Create a missing well-known plan (Ultimate Performance) first.
    [DscProperty()]
    [bool]$Create = $false

    [DscProperty()]
    [int]$Port = 8750

    # What Get reports: the plan in force.
    [DscProperty(NotConfigurable)]
    [string]$ActivePlanId

    [DscProperty(NotConfigurable)]
    [string]$ActivePlanName

    [PowerPlan] Get() {
        $s = Get-PowerPlanStatus -ComputerName localhost -Port $this.Port
        $r = [PowerPlan]::new()
        $r.Plan = $this.Plan
        $r.Create = $this.Create
        $r.Port = $this.Port
        $r.ActivePlanId = $s.PlanId
        $r.ActivePlanName = $s.PlanName
        return $r
    }

    [bool] Test() {
        $r = Set-PowerPlan -Plan $this.Plan -Create:$this.Create -ComputerName localhost -Port $this.Port -WhatIf -WarningAction SilentlyContinue
        return -not $r.DryRun
    }

    [void] Set() {
        Set-PowerPlan -Plan $this.Plan -Create:$this.Create -ComputerName localhost -Port $this.Port -Confirm:$false | Out-Null
    }
}

# Installing and removing the Windows service from a release: a file of its own.
. (Join-Path $PSScriptRoot 'PowerPlanService.ps1')

Export-ModuleMember -Function Get-PowerPlanStatus, Set-PowerPlan, Test-PowerPlan, Invoke-PowerPlanBenchmark, Get-PowerPlanRecommendation, Install-PowerPlanService, Uninstall-PowerPlanService
